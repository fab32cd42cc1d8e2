"""A program started without dpdb, for `dpdb attach -p` to find running. It works until the test
creates its stop file, then prints a result that attaching must not change.

    target.py STOPFILE MODE     MODE: busy, sleep, select, socket, threads, regex
"""
import os
import sys
import time

stop_file, mode = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 120


def work(n):
    result = n * 3  # attach breakpoint here
    return result


def running():
    return not os.path.exists(stop_file) and time.monotonic() < deadline


def busy():
    rounds = 0
    while running():
        rounds += 1
        work(rounds)
    return rounds > 0


def sleeping():
    while running():
        time.sleep(0.2)
        work(1)
    return True


def selecting():
    import select
    import threading  # noqa: F401  (as servers have: the agent starts in a thread of its own)

    reader, writer = os.pipe()
    while running():
        select.select([reader], [], [], 0.5)
        work(2)
    return True


def reading_a_socket():
    import socket
    import threading  # noqa: F401

    mine, theirs = socket.socketpair()
    mine.settimeout(0.5)
    while running():
        try:
            mine.recv(1)
        except socket.timeout:
            pass
        work(3)
    theirs.close()
    return True


def threads():
    import threading

    done = []

    def worker(number):
        while running():
            work(number)
            time.sleep(0.01)
        done.append(number)

    pool = [threading.Thread(target=worker, args=(n,), name="worker-%d" % n) for n in range(3)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return sorted(done) == [0, 1, 2]


def catastrophic_regex():
    import re

    print("regex start", flush=True)
    started = time.monotonic()
    matched = re.match(r"(a+)+$", "a" * 27 + "b")  # holds the GIL in C for seconds
    print("regex took %.1fs" % (time.monotonic() - started), flush=True)
    while running():
        work(4)
        time.sleep(0.05)
    return matched is None


modes = {"busy": busy, "sleep": sleeping, "select": selecting, "socket": reading_a_socket,
         "threads": threads, "regex": catastrophic_regex}
print("ready", os.getpid(), flush=True)
ok = modes[mode]()
print("result", ok, work(14), flush=True)
