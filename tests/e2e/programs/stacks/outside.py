"""A program started without dpdb whose threads wait in known places: the main thread sleeps in
`nap`, called from `main`; a second thread, "waiter", waits on an Event in `wait_for_it`. Says
"ready" with the waiter's ident and native id once both are started."""

import threading
import time


def wait_for_it(event):
    event.wait()  # the waiter waits here


def nap():
    while True:
        time.sleep(60)  # the main thread sleeps here


def main():
    event = threading.Event()
    waiter = threading.Thread(target=wait_for_it, args=(event,), name="waiter", daemon=True)
    waiter.start()
    print("ready", waiter.ident, waiter.native_id, flush=True)
    nap()  # main calls nap here


main()  # the module calls main here
