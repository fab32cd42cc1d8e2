"""A job for `dpdb break`'s report: three forked workers that have this file loaded, and one
subprocess that does not; none ever runs work(), so nothing stops. Prints its workers' pids."""

import os
import subprocess
import sys
import time


def work(i):
    return i + 1  # line: never run


children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        while True:
            time.sleep(0.05)
    children.append(pid)
other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
print("workers", " ".join(map(str, children)), flush=True)
try:
    time.sleep(300)
finally:
    for pid in children:
        os.kill(pid, 9)
    other.kill()
