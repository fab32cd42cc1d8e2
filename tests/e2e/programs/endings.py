"""Processes that end in every way `dpdb ps` must tell apart, and one that keeps counting."""
import multiprocessing as mp
import os
import signal
import sys
import time


def quits(code):
    sys.exit(code)


def counter():
    count = 0
    while True:
        count += 1  # the counter's loop
        time.sleep(0.01)


if __name__ == "__main__":
    spawn = mp.get_context("spawn")
    exited = spawn.Process(target=quits, args=(3,), name="quits")
    exited.start()
    exited.join()
    forked = os.fork()
    if forked == 0:
        os._exit(5)
    os.waitpid(forked, 0)
    killed = spawn.Process(target=time.sleep, args=(60,), name="sleeper")
    killed.start()
    time.sleep(1.0)
    os.kill(killed.pid, signal.SIGKILL)
    killed.join()
    print("endings done", exited.pid, forked, killed.pid, flush=True)
    counter()
