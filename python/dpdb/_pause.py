"""`dpdb pause`: a thread stops at its next Python line. Breakpoints on every line of the frames
on its stack (the one running may end without another line, by a return or an exception), good
for that thread only, once, and dropped once it stops. The engine arms just those lines, so
nothing else slows down."""

import sys
import threading

# Threads asked to pause (ident -> the numbers of their temporary breakpoints), and those that
# have: a pause breakpoint is good for one stop of one thread. Changed by the control thread and
# by the thread that stops, each holding the GIL.
_pausing = {}
_paused = set()
# Threads that stopped for a pause and have not said so at their prompt yet.
_announce = set()


def ask(debugger, all_threads):
    """Stop the main thread (or every thread but dpdb's own) at its next line, through the
    breakpoints of `debugger`."""
    frames = sys._current_frames()
    me = threading.get_ident()
    # dpdb's own threads run on (among them the one that keeps supervisors content).
    threads = [t for t in threading.enumerate() if not t.name.startswith("dpdb-")]
    wanted = [t.ident for t in threads] if all_threads else [threading.main_thread().ident]
    for ident in wanted:
        frame = frames.get(ident)
        if ident == me or frame is None:
            continue
        _pausing[ident] = numbers = []
        condition = "__import__('dpdb._pause', fromlist=['_']).due(%d)" % ident
        while frame is not None:
            filename = frame.f_code.co_filename
            for line in _lines_of(frame.f_code):
                if debugger.set_break(filename, line, cond=condition) is None:
                    numbers.append(debugger.get_breaks(filename, line)[-1].number)
            frame = frame.f_back


def drop_done(debugger):
    """The breakpoints of the threads that have stopped go."""
    for ident, numbers in list(_pausing.items()):
        if ident in _paused:
            for number in numbers:
                try:
                    debugger.clear_bpbynumber(str(number))
                except Exception:
                    pass
            del _pausing[ident]
            _paused.discard(ident)


def any_done():
    return bool(_paused)


def due(ident):
    """The condition of a pause breakpoint: true for its thread, once."""
    if threading.get_ident() != ident or ident not in _pausing or ident in _paused:
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
