"""A worker that shuts down cleanly on SIGTERM, as gunicorn's and Celery's do: its handler ends
its loop. It stops at a breakpoint first; its supervisor (the test) then sends SIGTERM."""
import os
import signal
import time

stopping = []


def on_term(number, frame):
    print("handler ran for " + signal.Signals(number).name, flush=True)
    stopping.append(number)


signal.signal(signal.SIGTERM, on_term)
print("worker pid %d" % os.getpid(), flush=True)
breakpoint()
rounds = 0
while not stopping and rounds < 600:
    time.sleep(0.05)
    rounds += 1
print("shut down cleanly" if stopping else "never told to stop", flush=True)
