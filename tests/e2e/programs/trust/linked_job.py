"""A job the test runs through a symlinked directory, or beside one: it waits for the test's go
(a file that appears, bounded), then calls work()."""
import os
import sys
import time


def work(n):
    return n * 2  # job breakpoint here


print("job waiting", flush=True)
for _ in range(1200):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.05)
print("job got %d" % work(21), flush=True)
