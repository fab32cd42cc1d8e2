"""A loop for a breakpoint whose condition, slow(), waits until a signal ends it: SIGTERM lands
while the condition runs. The program's handler says in which function it landed and ends the
program with status 7, as a service's handler would.

    condition_signal.py [stop]      stop: breakpoint() first (under dpdb run)
"""
import os
import signal
import sys
import time


def on_term(number, frame):
    print("SIGTERM in %s" % frame.f_code.co_name, flush=True)
    sys.exit(7)


def slow():
    print("in the condition", flush=True)
    time.sleep(3600)


signal.signal(signal.SIGTERM, on_term)
if sys.argv[1:] == ["stop"]:
    breakpoint()
print("ready %d" % os.getpid(), flush=True)
while True:
    time.sleep(0.05)  # the breakpoint's line
