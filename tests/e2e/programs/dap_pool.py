"""A job for `dpdb dap`'s child sessions: three pool workers, each given one task, and what the
program says on its stdout and stderr."""

import multiprocessing
import os
import sys


def work(n):
    square = n * n  # dap_pool: a worker's task
    return square


if __name__ == "__main__":
    print("dap_pool main %d" % os.getpid(), flush=True)
    print("dap_pool to stderr", file=sys.stderr, flush=True)
    with multiprocessing.get_context("fork").Pool(3) as pool:
        results = pool.map(work, range(3), chunksize=1)
    print("dap_pool results %s" % results, flush=True)
