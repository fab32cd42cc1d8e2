"""Four processes that run one line every 2 ms until a file appears."""
import os
import sys
import time


def tick(i):
    return i + 1  # the hot line


def run(stop):
    i = 0
    while not os.path.exists(stop):
        i = tick(i)
        time.sleep(0.002)


children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        run(sys.argv[1])
        os._exit(0)
    children.append(pid)
print("hot ready", flush=True)
run(sys.argv[1])
for pid in children:
    os.waitpid(pid, 0)
print("hot done", flush=True)
