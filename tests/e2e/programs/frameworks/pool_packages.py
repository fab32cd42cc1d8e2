"""A task that raises in a worker of a pool of the `multiprocess` package (datasets' way: a
lambda over examples, pickled by dill), of billiard's or of the standard library's (argv[1]:
multiprocess, billiard or multiprocessing), started with fork. The pool's two workers are idle
until a line comes on stdin; then the caller catches the pool's exception and the same pool runs
another task."""

import importlib
import os
import sys


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def ratio(example):
    return example["total"] // example["rows"]  # line: billiard divide


if __name__ == "__main__":
    package = importlib.import_module(sys.argv[1])
    examples = [{"total": 10, "rows": 5}, {"total": 10, "rows": 0}]
    pool = package.get_context("fork").Pool(2)
    say("main pid %d, workers %s" % (os.getpid(), sorted(worker.pid for worker in pool._pool)))
    sys.stdin.readline()
    try:
        if package.__name__ == "multiprocess":
            pool.map(lambda example: example["total"] // example["rows"], examples)  # line: lambda
        else:
            pool.map(ratio, examples)
    except ZeroDivisionError as error:
        say("the caller got %s" % type(error).__name__)
    say("the pool still works: %s" % pool.map(ratio, examples[:1]))
    pool.close()
    pool.join()
    say("main done")
