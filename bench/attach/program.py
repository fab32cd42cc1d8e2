"""The debuggee of bench/attach, started plainly (no dpdb): call-heavy pure Python, reporting
how many rounds it does in each window of WINDOW seconds, until stdin closes."""
import os
import sys
import threading
import time

WINDOW = float(sys.argv[1])


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
print("ready", os.getpid(), flush=True)
while not done.is_set():
    rounds = 0
    end = time.perf_counter() + WINDOW
    while time.perf_counter() < end:
        fib(15)
        rounds += 1
    print("rounds", rounds, flush=True)
