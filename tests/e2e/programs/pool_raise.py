"""A task that raises in a worker of a standard-library process pool, or in a multiprocessing
child (argv[1]: pool-map, pool-apply, executor, process, or pool-uncaught; argv[2]: the start
method). The caller catches the pool's exception (but in pool-uncaught, which ends with it), then
the same pool runs another task."""

import concurrent.futures
import multiprocessing
import os
import sys


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def share(total, rows):
    each = total // rows  # line: divide
    return each


def caught(error):
    # What the caller is sent: the exception, and the worker's traceback as text.
    remote = str(error.__cause__ or "")
    through_dpdb = os.path.join("dpdb", "frameworks") in remote
    say("the caller got %s (remote traceback through share: %s, through dpdb: %s; attributes "
        "%s)" % (type(error).__name__, "in share" in remote, through_dpdb, sorted(vars(error))))


def run_pool(kind, context):
    with context.Pool(1) as pool:
        try:
            if kind == "pool-map":
                pool.starmap(share, [(10, 0)])
            else:
                pool.apply_async(share, (10, 0)).get()
        except ZeroDivisionError as error:
            caught(error)
        say("the pool still works: %d" % pool.apply(share, (10, 5)))


def run_executor(context):
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        try:
            pool.submit(share, 10, 0).result()
        except ZeroDivisionError as error:
            caught(error)
        say("the pool still works: %d" % pool.submit(share, 10, 5).result())


if __name__ == "__main__":
    kind, method = sys.argv[1:3]
    context = multiprocessing.get_context(method)
    say("main pid %d" % os.getpid())
    if kind == "executor":
        run_executor(context)
    elif kind == "pool-uncaught":
        with context.Pool(1) as pool:
            pool.apply(share, (10, 0))  # line: uncaught
    elif kind == "process":
        child = context.Process(target=share, args=(10, 0))
        child.start()
        child.join()
        say("child exit %d" % child.exitcode)
    else:
        run_pool(kind, context)
    say("main done")
