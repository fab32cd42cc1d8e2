"""A forked child whose execs fail (a path that does not exist, a name on no PATH entry): it
goes on in Python, until it is killed without a word."""
import os
import signal
import time

child = os.fork()
if child == 0:
    for attempt in (lambda: os.execv("/no/such/program", ["x"]),
                    lambda: os.execvp("no-such-program-of-dpdb", ["x"])):
        try:
            attempt()
        except OSError:
            pass
    print("exec failed", os.getpid(), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(child, 0)
time.sleep(60)
