"""Processes that end right after a logpoint's line ran, each in its own way: the workers of a
`with Pool()` (terminate(); given the argument `pool`), os._exit, SIGTERM and SIGHUP at their
default action, SIGINT's KeyboardInterrupt, and the fatal signals of os.abort() and a read of
address 0 (three messages each, the last an instant before the crash)."""
import ctypes
import multiprocessing
import os
import signal
import sys
import time


def logged(how, n):
    return n  # the logged line


def pool_work(n):
    logged("pool", n)
    time.sleep(0.02)
    return n


FATAL = {"SIGABRT": os.abort, "SIGSEGV": lambda: ctypes.string_at(0)}


def ends_by(how):
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # `dpdb run` ignores it here
        logged(how, 0)
        if how in FATAL:
            logged(how, 1)
            logged(how, 2)
            FATAL[how]()
        if how == "os._exit":
            os._exit(0)
        try:
            os.kill(os.getpid(), getattr(signal, how))
            time.sleep(30)  # the signal ends the process before this ends
        except KeyboardInterrupt:
            sys.exit(130)
        os._exit(3)
    os.waitpid(pid, 0)


print("endings ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
if "pool" in sys.argv:
    with multiprocessing.get_context("fork").Pool(2) as pool:
        print("pool gave %d" % sum(pool.map(pool_work, range(4))), flush=True)
for how in ("os._exit", "SIGTERM", "SIGHUP", "SIGINT", "SIGABRT", "SIGSEGV"):
    ends_by(how)
print("endings done", flush=True)
