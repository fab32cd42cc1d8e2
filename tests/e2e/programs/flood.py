"""A hot loop for a logpoint that floods: waits for the file argv[1], runs argv[2] rounds and
prints their sum, then how many messages dpdb's engine dropped itself."""

import os
import sys
import time

go, rounds = sys.argv[1], int(sys.argv[2])
print("flood ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.02)
total = 0
for i in range(rounds):
    total += i  # the hot line
print("flood done %d" % total, flush=True)
from dpdb import _engine_native  # noqa: E402  (the engine this process runs under)

print("engine drops %d" % _engine_native.stats()["logpoints_dropped"], flush=True)
