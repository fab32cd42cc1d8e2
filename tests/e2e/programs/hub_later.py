"""A job that does its work whether or not a debugger is there: it says it runs, waits (bounded)
for the file named by its first argument, then reaches a breakpoint() and finishes."""
import os
import sys
import time

if __name__ == "__main__":
    print("job running, pid", os.getpid(), flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
        time.sleep(0.05)
    answer = 42
    breakpoint()
    print("job done, answer", answer, flush=True)
