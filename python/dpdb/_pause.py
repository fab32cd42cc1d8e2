"""`dpdb pause`: a thread stops at its next Python line. Breakpoints on every line of the frames
on its stack (the one running may end without another line, by a return or an exception), good
for that thread only, once, and dropped once it stops. The engine arms just those lines, so
nothing else slows down."""

import sys
import threading

from dpdb import _engine, _event_loops

# Threads asked to pause (ident -> the numbers of their temporary breakpoints), and those that
# have: a pause breakpoint is good for one stop of one thread. Changed by the control thread and
# by the thread that stops, each holding the GIL.
_pausing = {}
_paused = set()
# Threads that stopped for a pause and have not said so at their prompt yet.
_announce = set()
# False once the process is no longer debugged (`q`, dpdb detach -p): no pause lands then.
_debugged = True


def ask(debugger, all_threads):
    """Stop the main thread (or every thread but dpdb's own) at its next line, through the
    breakpoints of `debugger`. Returns the (ident, innermost frame) of each thread asked: one
    that waits in C code can be shown at once (_waiting_view)."""
    frames = sys._current_frames()
    me = threading.get_ident()
    # dpdb's own threads run on (among them the one that keeps supervisors content).
    threads = [t for t in threading.enumerate() if not t.name.startswith("dpdb-")]
    wanted = [t.ident for t in threads] if all_threads else [threading.main_thread().ident]
    asked = []
    with _engine.one_refresh(debugger):
        for ident in wanted:
            frame = frames.get(ident)
            if ident == me or frame is None:
                continue
            _forget(debugger, ident)  # an earlier pause of it not landed: this one replaces it
            _pausing[ident] = numbers = []
            condition = "__import__('dpdb._pause', fromlist=['_']).due(%d)" % ident
            for code in _codes_to_stop_in(frame):
                for line in _lines_of(code):
                    if debugger.set_break(code.co_filename, line, cond=condition) is None:
                        numbers.append(debugger.get_breaks(code.co_filename, line)[-1].number)
            asked.append((ident, frame))
    return asked


def _codes_to_stop_in(frame):
    """The code of the frames on a thread's stack; where an asyncio loop runs with coroutines
    suspended, theirs instead of the loop's own (an idle loop's next line is in selectors.py)."""
    stack = []
    while frame is not None:
        stack.append(frame)
        frame = frame.f_back
    suspended = _event_loops.suspended_code(stack)
    if suspended:
        stack = [f for f in stack if not _event_loops.in_the_loop(f.f_code)]
    return [f.f_code for f in stack] + suspended


def drop_done(debugger):
    """The breakpoints of the threads that have stopped go."""
    with _engine.one_refresh(debugger):
        for ident in list(_pausing):
            if ident in _paused:
                _forget(debugger, ident)


def drop_all(debugger):
    """Every pause asked goes, landed or not: the process is no longer debugged (`q`, dpdb
    detach -p, an attach interrupted while it waited for its pause)."""
    with _engine.one_refresh(debugger):
        for ident in list(_pausing):
            _forget(debugger, ident)


def forget_thread(debugger, ident):
    """The pause of one thread goes, landed or not (`c` in the view of a thread that waits)."""
    _forget(debugger, ident)


def waiting_for(ident):
    """Whether thread `ident` was asked to pause and has not stopped yet."""
    return ident in _pausing and ident not in _paused and _debugged


def _forget(debugger, ident):
    with _engine.one_refresh(debugger):
        for number in _pausing.pop(ident, ()):
            try:
                debugger.clear_bpbynumber(str(number))
            except Exception:
                pass
    _paused.discard(ident)


def any_done():
    return bool(_paused)


def any_asked():
    return bool(_pausing)


def stop_debugging():
    global _debugged
    _debugged = False


def resume_debugging():
    global _debugged
    _debugged = True


def debugged():
    return _debugged


def due(ident):
    """The condition of a pause breakpoint: true for its thread, once, while the process is
    debugged."""
    if threading.get_ident() != ident or ident not in _pausing or ident in _paused:
        return False
    if not _debugged:
        return False
    _paused.add(ident)
    _announce.add(ident)
    return True


def stopped_by_pause():
    """Whether the calling thread stopped for `dpdb pause` (true once per pause)."""
    ident = threading.get_ident()
    if ident not in _announce:
        return False
    _announce.discard(ident)
    return True


def _lines_of(code):
    if hasattr(code, "co_lines"):
        return sorted({line for _, _, line in code.co_lines() if line is not None})
    import dis

    return sorted({line for _, line in dis.findlinestarts(code)})
