"""A process stuck in C code holding the GIL (a catastrophic regular expression) while another of
its threads waits for it, and one that dies of a segmentation fault."""
import ctypes
import multiprocessing as mp
import re
import sys
import threading
import time


def spin():
    while True:
        pass


def stuck():
    threading.Thread(target=spin, name="spinner", daemon=True).start()
    print("stuck starting", flush=True)
    re.match(r"(a+)+$", "a" * 40 + "b")  # exponential backtracking, all in C


def crash():
    time.sleep(0.5)
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def spinners():
    for name in ("spinner-1", "spinner-2"):
        threading.Thread(target=spin, name=name, daemon=True).start()
    print("spinners up", flush=True)
    time.sleep(60)


if __name__ == "__main__":
    if sys.argv[1:] == ["spinners"]:
        spinners()
    target = stuck if sys.argv[1:] == ["stuck"] else crash
    child = mp.get_context("spawn").Process(target=target, name=target.__name__)
    child.start()
    child.join()
    print("child ended", child.pid, child.exitcode, flush=True)
    time.sleep(60)  # keeps the run (and its hub) up for the questions that follow
