"""Signals that arrive while the main thread is paused.

Python runs its signal handlers in the main thread, between bytecodes. A main thread paused at a
prompt waits in C for the user, so a handler would run only at some later command of pdb's, in
the middle of the debugger's own code — or, if nobody types, never: a supervisor's SIGTERM then
escalates to SIGKILL without the user being told why. While the main thread is paused, the
program's Python handlers are set aside: a signal that comes is told at the prompt at once
(the paused thread wakes a few times a second to notice), and delivered to the program's own
handler when the thread resumes, as if it had come then. Each signal's action is saved as the
kernel has it and put back exactly (`signal.signal()` alone would put Python's C handler in
place of one the program installed in C); a signal whose handler is C code, not Python's (Python's
record of it is stale), is not held at all: C handlers run while the thread is paused.
"""

import contextlib
import signal
import threading

from dpdb import _agent

# How often a paused main thread wakes to let a held signal be noticed.
WAKE_SECONDS = 0.25

_holding = False


def holding():
    """Whether the calling thread is the paused main thread whose signals are held."""
    return _holding and threading.current_thread() is threading.main_thread()


def _programs_handlers():
    """{signal number: handler} for every signal the program handles in Python (dpdb's own
    handlers, as Ctrl-C's under `dpdb run`, know what to do while paused and stay)."""
    handlers = {}
    for number in signal.valid_signals():
        try:
            handler = signal.getsignal(number)
        except (ValueError, OSError):
            continue
        if callable(handler) and not getattr(handler, "__module__", "").startswith("dpdb"):
            handlers[number] = handler
    return handlers


def _name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


@contextlib.contextmanager
def held_while_paused(tell):
    """Around a pause of the calling thread: if it is the main thread, the program's signal
    handlers wait for the end of the pause; `tell(text)` says at the prompt what arrived."""
    global _holding
    if _holding or threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = _programs_handlers()
    arrived = []

    def hold(number, frame):
        if number not in arrived:
            arrived.append(number)
        tell("%s arrived: the program's handler runs when the thread resumes (`c`)"
             % _name(number))

    held = {}
    for number, handler in handlers.items():
        saved = _agent.signal_action(number)
        signal.signal(number, hold)
        if _agent.signal_action_handler(saved) == _handler_now(number):
            held[number] = (handler, saved)
        else:  # the program's handler is C code: it stays
            _put_back(number, handler, saved)
    _holding = True
    try:
        yield
    finally:
        _holding = False
        for number, (handler, saved) in held.items():
            _put_back(number, handler, saved)
        for number in arrived:
            signal.raise_signal(number)


def _handler_now(number):
    return _agent.signal_action_handler(_agent.signal_action(number))


def _put_back(number, handler, saved):
    """Python's record of the handler, and the kernel's action exactly as it was (flags, mask)."""
    signal.signal(number, handler)
    _agent.restore_signal_action(number, saved)
