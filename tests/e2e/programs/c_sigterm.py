"""A SIGTERM handler installed in C, over one the program's Python code installed before (as
an embedding server or a C library does after Python's start-up: signal.getsignal() still names
the Python one). The C handler writes the file named in argv[1] and _exits 7; the Python one,
which must never run, exits 3."""

import ctypes
import os
import signal
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int)
libc.signal.restype = ctypes.c_void_p
libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)


def in_c(number):
    descriptor = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(descriptor, b"C handler ran\n")
    os.close(descriptor)
    libc._exit(7)


def in_python(number, frame):
    print("the Python handler ran", flush=True)
    libc._exit(3)


c_handler = HANDLER(in_c)
signal.signal(signal.SIGTERM, in_python)
libc.signal(signal.SIGTERM, ctypes.cast(c_handler, ctypes.c_void_p))
print("handlers set", flush=True)
breakpoint()
print("waiting for SIGTERM in", os.getpid(), flush=True)
time.sleep(60)
print("no SIGTERM came", flush=True)
