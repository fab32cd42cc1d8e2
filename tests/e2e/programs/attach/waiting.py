"""A program started without dpdb whose main thread waits in C code, for `dpdb attach -p`.

    waiting.py MODE     MODE: sleep, sleep_threading, recv, select, waitpid, lock, event, pool,
                              asyncio (an idle loop, its coroutine waiting for an asyncio.Event),
                              gevent (an idle hub, its greenlet waiting for a gevent Event),
                              lock_term_elsewhere (a lock, SIGTERM blocked in the main thread:
                              a thread of the program's takes it, and the wait goes on)

It prints "ready PID", then waits in MODE's call (the line marked "waits here"). SIGUSR1 ends one
wait: the call raises, and the program says "woken" on the next line and waits again. SIGTERM
ends it with status 7 (and a line saying so), as a service's handler would. Only `sleep` leaves
the threading module unimported.
"""
import os
import signal
import sys
import time

mode = sys.argv[1]
children = []  # pids, killed at SIGTERM
kept = []  # what must stay open for the wait to last


class Woken(Exception):
    pass


def on_usr1(number, frame):
    raise Woken()


def on_term(number, frame):
    for child in children:
        os.kill(child, signal.SIGKILL)
    print("terminated", flush=True)
    sys.exit(7)


def sleep():
    return lambda: time.sleep(3600)  # waits here


def recv():
    import socket

    mine, theirs = socket.socketpair()
    kept.append(theirs)
    return lambda: mine.recv(1)  # waits here


def select_():
    import select

    reader, writer = os.pipe()
    return lambda: select.select([reader], [], [])  # waits here


def waitpid():
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        while True:
            time.sleep(3600)
    children.append(child)
    return lambda: os.waitpid(child, 0)  # waits here


def lock():
    import threading

    held = threading.Lock()
    held.acquire()
    return lambda: held.acquire()  # waits here


def lock_term_elsewhere():
    import threading

    # CPython's handler runs in whichever thread the kernel gives SIGTERM to; only the main
    # thread runs the Python handler, at its next check, which a wait makes only when a signal
    # interrupts it. The state one signal that lands just before the main thread blocks leaves.
    threading.Thread(target=time.sleep, args=(3600,), name="takes-sigterm", daemon=True).start()
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])  # after: threads inherit it
    return lock()


def event():
    import threading

    never = threading.Event()
    return lambda: never.wait()  # waits here


def pool():
    import threading

    never = threading.Event()
    for number in range(4):
        threading.Thread(target=never.wait, name="worker-%d" % number, daemon=True).start()
    return lambda: never.wait()  # waits here


def asyncio_():
    import asyncio

    async def serve():
        woken = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, woken.set)
        print("ready", os.getpid(), flush=True)
        while True:
            await woken.wait()  # waits here
            woken.clear()
            print("woken", flush=True)  # after a wait

    return lambda: asyncio.run(serve())


def gevent_():
    import gevent
    from gevent.event import Event

    woken = Event()
    gevent.signal_handler(signal.SIGUSR1, woken.set)

    def serve():
        while True:
            woken.wait(timeout=3600)  # waits here (a timer keeps the loop alive)
            woken.clear()
            print("woken", flush=True)

    return lambda: gevent.spawn(serve).join()


def sleep_threading():
    import threading  # noqa: F401  (imported by the main thread, as most servers have it)

    return sleep()


signal.signal(signal.SIGUSR1, on_usr1)
signal.signal(signal.SIGTERM, on_term)
modes = {"sleep": sleep, "sleep_threading": sleep_threading, "recv": recv, "select": select_,
         "waitpid": waitpid, "lock": lock, "event": event, "pool": pool, "asyncio": asyncio_,
         "gevent": gevent_, "lock_term_elsewhere": lock_term_elsewhere}
wait = modes[mode]()
if mode != "asyncio":  # its loop says so once it runs
    print("ready", os.getpid(), flush=True)
while True:
    try:
        wait()
    except Woken:
        print("woken", flush=True)  # after a wait
