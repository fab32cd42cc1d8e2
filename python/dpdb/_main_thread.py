"""The main thread as the threading module knows it, after `dpdb attach -p` imported that module.

Before 3.13 the threading module takes the thread that imports it first for the main thread.
The attach's start-up runs in a thread of its own (the main thread may wait in C code for ever),
so in a program that had not imported threading yet, that thread would be taken for the main
one: `threading.main_thread()` would name it, `current_thread()` in the real main thread would
be a dummy, and once the start-up thread ended, `main_thread().is_alive()` would be false, after
which the interpreter's shutdown no longer waits for the program's non-daemon threads. 3.13
knows the main thread's ident, but gives it the importing thread's native id."""

import _thread
import os
import threading


def adopt(ident):
    """Makes the main thread of the threading module the thread `ident` (the process's first)
    if it took another for it."""
    main = threading._main_thread
    taken = main.ident
    if ident is None:
        return
    if hasattr(_thread, "_get_main_thread_ident"):
        # 3.13 and later ask the interpreter which thread is the main one, but still take its
        # OS id from the thread that imports the module.
        if taken == ident:
            main._native_id = os.getpid()
        return
    if taken == ident:
        return
    # The thread-state lock marks the thread alive until shutdown releases it. The one made at
    # import belongs to the start-up thread, and the interpreter releases it when that ends.
    alive = _thread.allocate_lock()
    alive.acquire()
    with threading._shutdown_locks_lock:
        threading._shutdown_locks.discard(main._tstate_lock)
        threading._shutdown_locks.add(alive)
    main._tstate_lock = alive
    with threading._active_limbo_lock:
        threading._active.pop(taken, None)
        main._ident = ident
        main._native_id = os.getpid()  # the first thread's OS id is the process's
        threading._active[ident] = main
