"""Two workers, one after the other: the first stops and is killed (as a supervisor kills a
worker); a second later the second stops."""
import os
import time


def worker(number):
    pid = os.fork()
    if pid == 0:
        print("worker %d pid %d" % (number, os.getpid()), flush=True)
        breakpoint()
        print("worker %d done" % number, flush=True)
        os._exit(0)
    return pid


_, status = os.waitpid(worker(1), 0)
print("worker 1 ended " + ("killed" if os.WIFSIGNALED(status) else "exited"), flush=True)
time.sleep(1)
os.waitpid(worker(2), 0)
print("all done", flush=True)
