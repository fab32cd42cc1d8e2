"""A job that stops once, and shuts down cleanly on SIGTERM (exit status 3)."""
import os
import signal
import sys
import time


def on_term(number, frame):
    print("program got SIGTERM", flush=True)
    sys.exit(3)


signal.signal(signal.SIGTERM, on_term)
print("ready %d" % os.getpid(), flush=True)
if sys.argv[1:] == ["stop"]:
    breakpoint()
    print("program done", flush=True)
else:
    for _ in range(600):
        time.sleep(0.05)
