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
    deadline = time.monotonic() + 120
    while not os.path.exists(stop_file) and time.monotonic() < deadline:
        time.sleep(0.05)


if __name__ == "__main__":
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=work, args=(i, sys.argv[1]), name="worker-%d" % i)
               for i in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
