"""dpdb web's job: three forked workers; worker-1 stops at breakpoint(), the others wait for the
file named by the first argument (bounded), then all end."""

import multiprocessing
import os
import sys
import time


def work(index, stop_file):
    if index == 1:
        breakpoint()
        stopped = "worker-1 stops here"  # noqa: F841
    end = time.monotonic() + 120
    # One line, of calls into C only: the waiting workers' stacks are the same whenever they are
    # taken (dpdb web's merged stacks).
    while not os.access(stop_file, os.F_OK) and time.monotonic() < end: time.sleep(0.05)  # noqa


if __name__ == "__main__":
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=work, args=(i, sys.argv[1]), name="worker-%d" % i)
               for i in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
