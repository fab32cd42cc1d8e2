"""A thread that runs one line every 2 ms while the main thread is stopped at its breakpoint(),
until a file appears."""
import os
import sys
import threading
import time


def tick(i):
    return i + 1  # the hot line


def spin(stop):
    i = 0
    while not os.path.exists(stop):
        i = tick(i)
        time.sleep(0.002)


worker = threading.Thread(target=spin, args=(sys.argv[1],), name="spinner")
worker.start()
breakpoint()
worker.join()
print("spinner done", flush=True)
