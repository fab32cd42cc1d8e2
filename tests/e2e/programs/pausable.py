"""Threads in the states a pause meets: a loop of short sleeps, a blocking wait whose last
statement is the call that blocks (the stop comes in its caller), pure computation, and a main
thread waiting in join()."""
import os
import threading
import time

stop = threading.Event()


def napper():
    naps = 0
    while not stop.is_set():
        naps += 1  # the napper's loop
        time.sleep(0.05)


def wait_once(event):
    return event.wait(0.2)


def waiter():
    event = threading.Event()
    waits = 0
    while not stop.is_set():
        waits += 1  # the waiter's loop
        wait_once(event)


def cruncher():
    total = 0
    while not stop.is_set():
        total += sum(i * i for i in range(1000))  # the cruncher's loop


if __name__ == "__main__":
    threads = [threading.Thread(target=f, name=f.__name__, daemon=True)
               for f in (napper, waiter, cruncher)]
    for thread in threads:
        thread.start()
    print("pausable up", os.getpid(), flush=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not stop.is_set():
        threads[0].join(0.1)  # the main thread's loop
    # Daemon threads: without the joins the program could end while some still wait paused.
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    print("pausable done", flush=True)
