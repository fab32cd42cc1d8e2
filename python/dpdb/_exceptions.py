"""Stops on exceptions, for the whole process: `uncaught` (a post-mortem session where the
program would print a traceback and end: sys.excepthook, threading.excepthook, and a
multiprocessing.Process's run(), which catches everything itself; and where a framework catches
a request's, a task's or a test's exception itself, through frameworks.caught_exceptions'
hooks) and `raised` (a session at the line of your code that raises, before any handler runs).

Who wants them: `dpdb run --post-mortem` (uncaught, from start-up) and the hub's exception
breakpoints, which an IDE sets (setExceptionBreakpoints; "uncaught exceptions" and "raised
exceptions" among `dpdb break --list`). Each asks under its own name; the hooks go in once and
do nothing while nobody asks.

`raised` uses sys.monitoring's RAISE event (3.12+), which costs nothing until an exception is
raised, and then one Python call per frame it passes through (bench/exceptions). Before 3.12 the
only way to see a raise is a trace function in every frame (pdb's), which the engine's trace
function occupies and which would slow every line: there `raised` is reported as unavailable."""

import os
import sys
import threading

from dpdb import _program_output, frameworks

# Why uncaught exceptions are wanted -> the function that opens the session (type, value, tb).
_uncaught = {}
_hooks_in = False
# The function that stops at a raise (frame, exception), while `raised` is armed.
_on_raise = None
_TOOL_NAME = "dpdb-raise"
_tool = None
_installed = None
# Per file: whether a raise there is the user's (see _users_file).
_users_files = {}
# Set while this thread is stopped at a raise: what its prompt evaluates may raise too.
_stopping = threading.local()
_DPDB = os.path.dirname(os.path.abspath(__file__)) + os.sep

RAISED_AVAILABLE = sys.version_info >= (3, 12)


def want_uncaught(why, open_session):
    """Open a post-mortem session on every uncaught exception, and on every exception a framework
    catches where frameworks.caught_exceptions hooks it (open_session None: no more, for this
    reason).
    open_session(type, value, traceback, header=None, mode="unhandled"): a framework's exception
    comes with the framework's line, and DAP's break mode for an exception user code did not
    handle though something else did (debugpy's for the same)."""
    if open_session is None:
        _uncaught.pop(why, None)
    else:
        _uncaught[why] = open_session
        _install_hooks()
    frameworks.install_caught_exceptions(_open_caught if _uncaught else None)


def armed():
    """Whether the hub's exception breakpoints are armed here."""
    return "hub" in _uncaught or _on_raise is not None


def post_mortem(exc_type, exc_value, traceback, open_session):
    """An uncaught exception (not an exit): said on stderr, then its session opened."""
    if traceback is None or issubclass(exc_type, (SystemExit, KeyboardInterrupt)):
        return
    if frameworks.caught_exception_seen(exc_value):
        return  # a framework's hook showed it where it was raised already
    _program_output.notice("dpdb: uncaught %s in pid %d; opening a post-mortem session\n" % (
        exc_type.__name__, os.getpid()))
    open_session(exc_type, exc_value, traceback)


def _open(exc_type, exc_value, traceback):
    for open_session in list(_uncaught.values())[:1]:  # one session, whoever asked
        post_mortem(exc_type, exc_value, traceback, open_session)


def _open_caught(exception, traceback, header):
    for open_session in list(_uncaught.values())[:1]:
        open_session(type(exception), exception, traceback, header, "userUnhandled")


def _install_hooks():
    global _hooks_in
    if _hooks_in:
        return
    _hooks_in = True
    previous_excepthook = sys.excepthook

    def excepthook(exc_type, exc_value, traceback):
        previous_excepthook(exc_type, exc_value, traceback)
        _open(exc_type, exc_value, traceback)

    sys.excepthook = excepthook

    previous_thread_hook = threading.excepthook

    def thread_excepthook(args):
        previous_thread_hook(args)
        _open(args.exc_type, args.exc_value, args.exc_traceback)

    threading.excepthook = thread_excepthook

    # multiprocessing.Process catches everything its run() raises and only prints it.
    from multiprocessing import process

    original_bootstrap = process.BaseProcess._bootstrap

    def bootstrap_with_post_mortem(self, *args, **kwargs):
        run = self.run

        def run_with_post_mortem():
            try:
                return run()
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException:
                _open(*sys.exc_info())
                raise

        self.run = run_with_post_mortem
        return original_bootstrap(self, *args, **kwargs)

    process.BaseProcess._bootstrap = bootstrap_with_post_mortem


def want_raised(stop, installed):
    """Stop at every raise in the user's code: stop(frame, exception); None: no more.
    installed(path): whether a file is the standard library's or an installed package's, which
    are not the user's. False where this interpreter cannot (before 3.12)."""
    global _on_raise, _tool, _installed
    _installed = installed
    if not RAISED_AVAILABLE:
        return stop is None
    monitoring = sys.monitoring
    _on_raise = stop
    if stop is None:
        if _tool is not None:
            monitoring.set_events(_tool, 0)
        return True
    if _tool is None:
        # Tools 3 and 4 have no assigned role (the engine is the debugger, tool 0).
        for tool in (3, 4):
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, _TOOL_NAME)
                _tool = tool
                break
        else:
            return False
        monitoring.register_callback(_tool, monitoring.events.RAISE, _raised)
    monitoring.set_events(_tool, monitoring.events.RAISE)
    return True


def _users_file(filename):
    """The user's code: not dpdb's, not the standard library or an installed package, not code
    without a file (<string>, <frozen ...>)."""
    known = _users_files.get(filename)
    if known is None:
        known = not (filename.startswith("<") or filename.startswith(_DPDB)
                     or _installed(filename))
        _users_files[filename] = known
    return known


def _raised(code, offset, exception):
    # Called in every frame the exception passes through: it stops once, in the first frame of
    # the user's code it reaches (the raise itself, or where a library's exception came out).
    stop = _on_raise
    if stop is None or not _users_file(code.co_filename) or getattr(_stopping, "now", False):
        return
    traceback = exception.__traceback__
    entry = traceback.tb_next if traceback is not None else None
    while entry is not None:
        if _users_file(entry.tb_frame.f_code.co_filename):
            return  # it stopped in that frame already
        entry = entry.tb_next
    if threading.current_thread().name.startswith("dpdb-"):
        return
    frame = traceback.tb_frame if traceback is not None else sys._getframe(1)
    _stopping.now = True
    try:
        stop(frame, exception)
    finally:
        _stopping.now = False
