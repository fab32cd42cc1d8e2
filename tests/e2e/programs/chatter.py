"""A parent that writes each of its lines in two pieces while its forked child runs a line many
times (a logpoint there sends a message each time): where a notice may land inside a line."""
import os
import sys
import time

ROUNDS = int(sys.argv[1])

def terminal(fd):
    return os.ttyname(fd) if os.isatty(fd) else "-"


print("terminals", terminal(0), terminal(1), flush=True)
child = os.fork()
if child == 0:
    for beat in range(ROUNDS):
        time.sleep(0.02)  # chatter: one beat
    os._exit(0)
for tick in range(ROUNDS):
    sys.stdout.write("tick")
    sys.stdout.flush()
    time.sleep(0.02)
    sys.stdout.write(" %d\n" % tick)
    sys.stdout.flush()
os.waitpid(child, 0)
print("chatter done", flush=True)
