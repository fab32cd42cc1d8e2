"""Where a thread that runs an asyncio event loop will run the program's code next: in the
coroutines the loop has suspended, not in the loop. `dpdb pause` of an idle loop uses it, so that
the stop lands in the user's coroutine once an event wakes it, rather than in selectors.py."""

import os
import sys


def _library_folders():
    asyncio = sys.modules.get("asyncio")
    selectors = sys.modules.get("selectors")
    folders = [os.path.join(os.path.dirname(asyncio.__file__), "")] if asyncio else []
    return tuple(folders), selectors.__file__ if selectors else None


def in_the_loop(code):
    """Whether `code` is the event loop's own (asyncio's, selectors')."""
    folders, selectors = _library_folders()
    return code.co_filename.startswith(folders) or code.co_filename == selectors


def suspended_code(stack):
    """The code of the coroutines suspended by the asyncio loop that a frame of `stack` (a
    thread's frames, innermost first) runs, outermost coroutine of each task first, the loop's
    own left out; [] if no loop runs there."""
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
