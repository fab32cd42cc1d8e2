"""Waiting for the test's go: a file that appears (bounded)."""
import os
import sys
import time


def wait_for(path, seconds=60):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit("no %s within %d s" % (path, seconds))
        time.sleep(0.05)
