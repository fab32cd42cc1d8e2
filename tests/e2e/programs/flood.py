"""A hot loop for a logpoint that floods: waits for the file argv[1], runs argv[2] rounds and
prints their sum."""

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
