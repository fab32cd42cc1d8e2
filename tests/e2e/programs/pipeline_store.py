"""The store of pipeline.py: a subprocess that reads `REQUEST TOTAL` lines and answers with what
it stored."""

import sys


def store(request, total):
    stored = total * 10
    return stored  # stage 3: stored


print("store ready", flush=True)  # its code runs: a breakpoint in it is armed at once
for line in sys.stdin:
    request, total = line.split()
    print(request, store(request, int(total)), flush=True)
