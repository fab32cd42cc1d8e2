"""Raises an exception nobody catches: in the main thread, in a thread, or in a multiprocessing
child (argv[1])."""

import multiprocessing
import os
import sys
import threading


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def fail(where):
    detail = "failure in " + where
    raise ValueError(detail)  # line: raise


if __name__ == "__main__":
    where = sys.argv[1]
    say("main pid %d" % os.getpid())
    if where == "thread":
        thread = threading.Thread(target=fail, args=(where,), name="doomed")
        thread.start()
        thread.join()
        say("thread joined")
    elif where == "child":
        child = multiprocessing.get_context("spawn").Process(target=fail, args=(where,))
        child.start()
        child.join()
        say("child exit %d" % child.exitcode)
    else:
        fail(where)
    say("main done")
