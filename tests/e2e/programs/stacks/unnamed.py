"""A program started without dpdb with a second thread that threading did not start (no Thread
object, so no name to read), sleeping in `raw`. Says "ready" with its ident once it runs."""

import _thread
import time

started = _thread.allocate_lock()
started.acquire()


def raw():
    started.release()
    time.sleep(600)  # the raw thread sleeps here


ident = _thread.start_new_thread(raw, ())
started.acquire()
print("ready", ident, flush=True)
time.sleep(600)
