"""A job for `dpdb dap`'s child sessions: three pool workers, each given one task."""

import multiprocessing
import os
import sys


def work(n):
    square = n * n  # dap_pool: a worker's task
    # What the IDE shows as the program's output, each stream as its own category.
    print("dap_pool worker %d square %d" % (os.getpid(), square))
    sys.stderr.write("dap_pool worker %d stderr\n" % os.getpid())
    return square


if __name__ == "__main__":
    print("dap_pool main %d" % os.getpid(), flush=True)
    # close and join: the workers end on their own once their tasks are done. (`with Pool()`
    # terminates them: after paused workers, that hung about one run in six, a worker left
    # running and the pool's main process waiting: an agent matter, not the IDE's.)
    pool = multiprocessing.get_context("fork").Pool(3)
    results = pool.map(work, range(3), chunksize=1)
    pool.close()
    pool.join()
    print("dap_pool results %s" % results, flush=True)
