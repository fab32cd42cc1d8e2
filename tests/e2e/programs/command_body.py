# The program tests/e2e/programs/command.py runs with `python -c`: its lines are the lines of
# "<string>" in that process. It waits for the file argv[1], then calls work().
import os
import sys
import time


def work(rows):
    total = sum(range(rows))  # line: total
    return total  # line: return


print("command ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
print("command result", work(5), flush=True)
