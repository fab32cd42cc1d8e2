"""Where a thread that runs an event loop will run the program's code next: in the coroutines
an asyncio loop has suspended, or the greenlets gevent's hub has, not in the loop. `dpdb pause`
of an idle loop uses it, so that the stop lands in the user's coroutine or greenlet once an event
wakes it, rather than in selectors.py or gevent's hub."""

import gc
import os
import sys


def _library_folders():
    folders = [os.path.join(os.path.dirname(module.__file__), "")
               for module in map(sys.modules.get, ("asyncio", "gevent", "greenlet"))
               if module is not None and getattr(module, "__file__", None)]
    selectors = sys.modules.get("selectors")
    return tuple(folders), selectors.__file__ if selectors else None


def in_the_loop(code):
    """Whether `code` is the event loop's own (asyncio's, selectors', gevent's, greenlet's)."""
    folders, selectors = _library_folders()
    return code.co_filename.startswith(folders) or code.co_filename == selectors


def suspended_code(stack):
    """The code of what the event loop that a frame of `stack` (a thread's frames, innermost
    first) runs has suspended, the loop's own left out; [] if no loop runs there."""
    return _suspended_coroutines(stack) or _suspended_greenlets(stack)


def _suspended_coroutines(stack):
    """asyncio: the coroutines of the loop's tasks, outermost coroutine of each task first."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return []
    loop = _running_loop(asyncio, stack)
    if loop is None:
        return []
    try:
        tasks = asyncio.all_tasks(loop)
    except RuntimeError:  # the loop's thread changed the set of tasks meanwhile: its stack serves
        return []
    codes = []
    for task in tasks:
        awaiting = task.get_coro()
        while awaiting is not None:
            frame = getattr(awaiting, "cr_frame", None) or getattr(awaiting, "gi_frame", None)
            if frame is not None and not in_the_loop(frame.f_code):
                codes.append(frame.f_code)
            awaiting = getattr(awaiting, "cr_await", None) or getattr(awaiting, "gi_yieldfrom",
                                                                       None)
    return codes


def _running_loop(asyncio, stack):
    for frame in stack:
        if frame.f_code.co_name == "run_forever" and in_the_loop(frame.f_code):
            loop = frame.f_locals.get("self")
            if isinstance(loop, asyncio.AbstractEventLoop):
                return loop
    return None


def _suspended_greenlets(stack):
    """gevent: where the thread runs its hub, the code of every greenlet suspended in the
    process (a pause's breakpoints are due in its own thread only, so other threads' are
    harmless)."""
    return [f.f_code for _, frame in _greenlets_of_hub(stack) for f in outwards(frame)
            if not in_the_loop(f.f_code)]


def waiting_greenlet(stack):
    """gevent: where the thread waits in its hub, the innermost frame of a greenlet of the
    program's that waits for it, spawned ones before the main greenlet; else None."""
    gevent = sys.modules.get("gevent")
    found = [(not isinstance(suspended, gevent.Greenlet), frame)
             for suspended, frame in _greenlets_of_hub(stack)
             if any(not in_the_loop(f.f_code) for f in outwards(frame))]
    return min(found, key=lambda pair: pair[0])[1] if found else None


def outwards(frame):
    """`frame` and its callers, innermost first."""
    while frame is not None:
        yield frame
        frame = frame.f_back


def _greenlets_of_hub(stack):
    """(greenlet, innermost frame) of every greenlet suspended in the process, where a frame of
    `stack` is gevent's hub. gevent keeps no list of them: the collector's is searched."""
    gevent = sys.modules.get("gevent")
    greenlet = sys.modules.get("greenlet")
    if gevent is None or greenlet is None:
        return []
    hub_folder = os.path.join(os.path.dirname(gevent.__file__), "")
    if not any(frame.f_code.co_filename.startswith(hub_folder) for frame in stack):
        return []
    return [(found, found.gr_frame) for found in gc.get_objects()
            if isinstance(found, greenlet.greenlet) and found.gr_frame is not None]
