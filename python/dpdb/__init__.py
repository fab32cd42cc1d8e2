"""dpdb: a debugger for Python programs that run as many processes.

`breakpoint()` under `dpdb run` (or with PYTHONBREAKPOINT=dpdb.set_trace), `dpdb.set_trace()` and
`dpdb.post_mortem()` open a pdb session that any dpdb client can attach to through the hub.
"""

import os
import pdb
import sys

__all__ = ["set_trace", "post_mortem"]
__version__ = "0.1.0"


def _can_use_hub():
    from dpdb import _process

    if _process.ensure_link():
        return True
    if sys.stdin is not None and sys.stdin.isatty():
        return False  # no hub, but a terminal: plain pdb serves
    if not _process.hub_configured():
        sys.stderr.write("dpdb: breakpoint skipped in pid %d: no hub (DPDB_HUB is not set) and "
                         "no terminal\n" % __import__("os").getpid())
        return None
    return True  # no hub yet and no terminal: wait for it per DPDB_WAIT


def set_trace(*, header=None):
    """Pause the calling thread in a dpdb session (plain pdb when there is no hub but a terminal)."""
    _set_trace_at(sys._getframe().f_back, header)


def _set_trace_at(frame, header=None, commands=(), debugger=None):
    """Pause at `frame`; `commands` run at the prompt first, as lines of a .pdbrc would. Returns
    the debugger armed (None if none was): `debugger` if given, one whose trace function the
    frame keeps (it is leaving its interaction), else a new one."""
    from dpdb._debugger import Debugger, stopped_debugging

    if stopped_debugging():
        return
    if debugger is None:
        use_hub = _can_use_hub()
        if use_hub is None:
            return
        debugger = Debugger() if use_hub else pdb.Pdb()
    if header is not None:
        debugger.message(header)
    debugger.rcLines.extend(commands)
    own = frame.f_code.co_filename.startswith(os.path.dirname(__file__) + os.sep)
    if own and isinstance(debugger, Debugger):
        debugger.own_frame_to_stop = frame
    debugger.set_trace(frame)
    return debugger


def post_mortem(traceback=None, *, header=None):
    """Open a post-mortem session on a traceback (default: the exception being handled), with
    `header` as its first line."""
    exception = None
    if traceback is None:
        _, exception, traceback = sys.exc_info()
    if traceback is None:
        raise ValueError("post_mortem() needs a traceback outside an except block")
    _post_mortem_of(traceback, exception, header)


def _post_mortem_of(traceback, exception, header=None, mode="unhandled"):
    from dpdb._debugger import Debugger, stopped_debugging

    if stopped_debugging():
        return
    use_hub = _can_use_hub()
    if use_hub is None:
        return
    debugger = Debugger() if use_hub else pdb.Pdb()
    if header is not None:
        debugger.message(header)
    if use_hub:
        debugger.post_mortem(traceback, exception, mode)
    else:  # pdb.post_mortem's own steps, with the header before them
        debugger.reset()
        debugger.interaction(None, traceback)
