"""A loop that waits in C (a sleep of the length given in seconds), as a poller or a watcher
does; Ctrl-C ends it the way it does without a debugger."""

import os
import sys
import time

nap = float(sys.argv[1])
print("loop started (pid %d)" % os.getpid(), flush=True)
rounds = 0
try:
    while True:
        rounds += 1
        time.sleep(nap)
except KeyboardInterrupt:
    print("loop ended by KeyboardInterrupt", flush=True)
    raise
