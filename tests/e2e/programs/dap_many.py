"""A job of many processes that reach one breakpoint at once (bench/dap's simultaneous stops):
the main process forks WORKERS workers, and each calls work() every 10 ms until it has run for
a minute, so that every one of them is on the line as soon as a debugger arms it."""

import multiprocessing
import os
import time


def work(n):
    return n * 2  # dap_many: every worker's line


def worker():
    deadline = time.monotonic() + 60  # bounded: a minute, then the job ends by itself
    n = 0
    while time.monotonic() < deadline:
        work(n)
        n += 1
        time.sleep(0.01)


if __name__ == "__main__":
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=worker) for _ in range(int(os.environ.get("WORKERS", "20")))]
    for process in workers:
        process.start()
    for process in workers:
        process.join()
