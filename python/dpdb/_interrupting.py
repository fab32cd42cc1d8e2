"""`interrupt` in the view of a thread that waits in C code: its wait ends now, as Ctrl-C would.

Only the main thread runs Python's signal handlers, so only its wait can be ended so: SIGINT
delivered to it makes the blocked call return early (EINTR) and the program's own SIGINT handler
run, KeyboardInterrupt by default. Under `dpdb run`, dpdb's Ctrl-C pause may own SIGINT
(_ctrl_c): this one SIGINT goes to the program's handler instead, by the handler's own
`to_the_program_once` (the start-up stage is not imported from here)."""

import signal
import threading


def why_not(thread):
    """Why the wait of `thread` cannot be ended by a signal, or None if it can."""
    if thread is not threading.main_thread():
        return ("only the main thread takes signals, and %s is another: its wait ends when "
                "what it waits for comes" % thread.name)
    handler = signal.getsignal(signal.SIGINT)
    if handler == signal.SIG_IGN:
        return "SIGINT is ignored in this process"
    if handler in (signal.SIG_DFL, None):
        return "SIGINT would kill the process (no Python handler for it)"
    return None


def how(thread):
    """What the view's first lines say `interrupt` does for `thread`."""
    reason = why_not(thread)
    return (" (SIGINT, as Ctrl-C)" if reason is None else
            " where it can, not here: %s" % reason)


def interrupt_main_thread():
    handler = signal.getsignal(signal.SIGINT)
    getattr(handler, "to_the_program_once", lambda: None)()  # dpdb's Ctrl-C pause (_ctrl_c)
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
