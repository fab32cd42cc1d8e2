"""A process stuck in C code holding the GIL (a catastrophic regular expression) while another of
its threads waits for it, and processes that die of a fatal signal, each caused the way real code
meets it (a fault where the machine allows, abort() for SIGABRT)."""
import ctypes
import faulthandler
import mmap
import multiprocessing as mp
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time


def spin():
    while True:
        pass


def stuck():
    threading.Thread(target=spin, name="spinner", daemon=True).start()
    print("stuck starting", flush=True)
    re.match(r"(a+)+$", "a" * 40 + "b")  # exponential backtracking, all in C


def run_machine_code(code):
    """Calls x86-64 machine code from an executable page."""
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    ctypes.CFUNCTYPE(None)(address)()


def bus_error():
    with tempfile.TemporaryFile() as file:
        file.truncate(mmap.PAGESIZE)
        mapped = mmap.mmap(file.fileno(), mmap.PAGESIZE)
        file.truncate(0)
        return mapped[0]  # the page no longer has a file behind it


FAULTS = {
    "SIGSEGV": lambda: ctypes.string_at(0),  # reads address 0
    "SIGBUS": bus_error,
    "SIGABRT": os.abort,
}
if platform.machine() in ("x86_64", "AMD64"):
    FAULTS["SIGILL"] = lambda: run_machine_code(b"\x0f\x0b")  # ud2
    # xor ecx, ecx; mov eax, 1; cdq; idiv ecx: integer division by zero
    FAULTS["SIGFPE"] = lambda: run_machine_code(b"\x31\xc9\xb8\x01\x00\x00\x00\x99\xf7\xf9\xc3")


def crash(name):
    if name not in FAULTS:  # another machine: the signal, sent rather than met
        FAULTS[name] = lambda: signal.raise_signal(getattr(signal, name))
    if os.environ.get("FAULTS_OWN_FAULTHANDLER"):
        faulthandler.enable()  # the program's own, installed after dpdb's handlers
    time.sleep(0.5)
    FAULTS[name]()


def spinners():
    for name in ("spinner-1", "spinner-2"):
        threading.Thread(target=spin, name=name, daemon=True).start()
    print("spinners up", flush=True)
    time.sleep(60)


def child_process(argv):
    """`stuck`, or `crash SIGNAL fork|spawn|forkserver|subprocess`: the child, started; its pid
    and a function that waits for its exit status."""
    if argv[0] == "crash" and argv[2] == "subprocess":
        child = subprocess.Popen([sys.executable, __file__, "crash-here", argv[1]])
        return child.pid, child.wait
    if argv[0] == "stuck":
        child = mp.get_context("spawn").Process(target=stuck, name="stuck")
    else:
        child = mp.get_context(argv[2]).Process(target=crash, args=(argv[1],), name="crash")
    child.start()
    return child.pid, lambda: (child.join(), child.exitcode)[1]


if __name__ == "__main__":
    if sys.argv[1] == "spinners":
        spinners()
    elif sys.argv[1] == "crash-here":
        crash(sys.argv[2])
    else:
        pid, wait = child_process(sys.argv[1:])
        print("child ended", pid, wait(), flush=True)
        time.sleep(60)  # keeps the run (and its hub) up for the questions that follow
