"""Runs exec_conf.py's code made by exec(compile()) (at its start with "made-first", else once told
to go), and once told to go calls its hook(): in this
process, in a forked child (once told to go on: it has reconciled its breakpoints with the hub's
by then) and in a spawned one (which makes the code again)."""
import multiprocessing
import os
import sys

from wait_go import wait_for

CONF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exec_conf.py")


def load():
    namespace = {}
    with open(CONF) as f:
        exec(compile(f.read(), CONF, "exec"), namespace)
    return namespace


def spawned():
    print("spawned got %d" % load()["hook"](3), flush=True)


if __name__ == "__main__":
    made_first = sys.argv[2:] == ["made-first"]  # before the test's breakpoint, or after it
    if made_first:
        conf = load()
    print("loader waiting", flush=True)
    wait_for(sys.argv[1])
    if not made_first:
        conf = load()
    print("loader got %d" % conf["hook"](1), flush=True)
    pid = os.fork()
    if pid == 0:
        wait_for(sys.argv[1] + "-fork")
        print("forked got %d" % conf["hook"](2), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    child = multiprocessing.get_context("spawn").Process(target=spawned)
    child.start()
    child.join()
    print("loader done", flush=True)
