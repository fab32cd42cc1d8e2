"""A process stuck in C code holding the GIL (a catastrophic regular expression), and one that
dies of a segmentation fault."""
import ctypes
import multiprocessing as mp
import re
import sys
import time


def stuck():
    print("stuck starting", flush=True)
    re.match(r"(a+)+$", "a" * 40 + "b")  # exponential backtracking, all in C


def crash():
    time.sleep(0.5)
    ctypes.string_at(0)  # reads address 0: SIGSEGV


if __name__ == "__main__":
    target = stuck if sys.argv[1:] == ["stuck"] else crash
    child = mp.get_context("spawn").Process(target=target, name=target.__name__)
    child.start()
    child.join()
    print("child ended", child.pid, child.exitcode, flush=True)
    time.sleep(60)  # keeps the run (and its hub) up for the questions that follow
