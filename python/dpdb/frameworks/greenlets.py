"""gevent's greenlets shown as greenlets. Once gevent has monkey-patched threading, its idents are
greenlets': threading.get_ident() is the current greenlet's, the main thread is listed under its
main greenlet's, and a spawned greenlet's current_thread() is a dummy named Dummy-N. A session
is labelled by its greenlet; `dpdb stacks` finds OS threads by their own idents (those of
sys._current_frames()) and lists the suspended greenlets after them."""

import _thread
import gc
import sys
import threading


def _patched_monkey():
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_object_patched("_thread", "get_ident"):
        return monkey
    return None


def os_thread_ident():
    """The calling OS thread's ident, as sys._current_frames() keys it."""
    monkey = _patched_monkey()
    return monkey.get_original("_thread", "get_ident")() if monkey else _thread.get_ident()


def _gevent_greenlet_class():
    gevent = sys.modules.get("gevent")
    return getattr(gevent, "Greenlet", None)


def label(thread):
    """What a session in the calling thread is labelled by: the greenlet it runs, if gevent's."""
    greenlet_class = _gevent_greenlet_class()
    greenlet = sys.modules.get("greenlet")
    if greenlet_class is not None and greenlet is not None:
        current = greenlet.getcurrent()
        if isinstance(current, greenlet_class):
            return "%s (greenlet)" % current.name
    return thread.name


def threads_by_os_ident(frames):
    """threading's Thread objects by the OS idents that key `frames`. gevent lists the main
    thread under its main greenlet's ident: it is the one OS thread threading does not know."""
    found = {t.ident: t for t in threading.enumerate()}
    main = threading.main_thread()
    if _patched_monkey() and main.ident not in frames:
        unknown = [ident for ident in frames if ident not in found]
        if len(unknown) == 1:
            found[unknown[0]] = main
    return found


def greenlets():
    """(running, suspended) gevent greenlets: the names of those that run now (the frames of
    each are its thread's), and (name, innermost frame) of each started, not dead and not
    running. gevent keeps no list: the collector's is searched, once per `dpdb stacks`."""
    greenlet_class = _gevent_greenlet_class()
    if greenlet_class is None:
        return [], []
    running, suspended = [], []
    for found in gc.get_objects():
        if isinstance(found, greenlet_class) and found:  # started and not dead
            if found.gr_frame is None:
                running.append(found.name)
            else:
                suspended.append((found.name, found.gr_frame))
    return running, suspended
