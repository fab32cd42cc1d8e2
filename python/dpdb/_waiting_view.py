"""A session on a thread that waits in C code (a sleep, a recv, a lock), while it waits.

A pause lands at the thread's next Python line, which may be minutes away. Meanwhile a thread of
dpdb's opens the pause's session over the waiting thread's frames: that thread released the GIL,
and its frames stay as they are while the view holds it, so `where`, `up`, `p`, `list` read
them. No Python ever runs in the waiting thread for it. When the wait ends, the thread stops at
its next line for the pause, as before, and that stop takes the session over: same session, same
client. Commands that would run the thread (`n`, `s`, `r`, `until`, `j`) wait for that stop;
`c` takes the pause back and leaves the thread waiting as it was."""

import pdb
import sys
import threading
import time

from dpdb import _agent, _console, _debugger, _event_loops, _interrupting, _pause

# How long a thread asked to pause may run no Python line before it is taken for one that waits
# in C: every line of its frames is armed, so a thread that runs Python has stopped by then.
_SETTLE_SECONDS = 0.2
# How often a view that waits (for its client, or for the thread) looks whether the wait ended.
_POLL_SECONDS = 0.1


def watch(debugger, ident, frame):
    """After a pause of thread `ident` (whose innermost frame is `frame`) was armed through
    `debugger`: a view of it if it runs no Python line in the next moment."""
    thread = threading.Thread(target=_watch, args=(debugger, ident, frame, frame.f_lasti),
                              name="dpdb-view", daemon=True)
    _agent.start_own_thread(thread, "view")


def _watch(debugger, ident, frame, lasti):
    time.sleep(_SETTLE_SECONDS)
    thread = threading._active.get(ident)
    if thread is None or ident in _console._views:
        return  # gone, or shown already (a pause asked again)
    # Listed before it looks: a stop that comes after the look finds it and takes it over.
    console = _console._views[ident] = _ViewConsole()
    try:
        if not _pause.waiting_for(ident):
            return
        if _current_frame(ident) is not frame or frame.f_lasti != lasti:
            return  # it runs Python (a call its frames did not show when the pause was armed)
        # An idle gevent hub's thread is shown in the program's greenlet that waits, not in
        # the hub's loop (its frames stay as they are while the thread waits, as the hub's do).
        stack = list(_event_loops.outwards(frame))
        _View(debugger, thread, console).show(_event_loops.waiting_greenlet(stack) or frame)
    finally:
        _console._views.pop(ident, None)
        console.done.set()


def _quit_views():
    """The process is no longer debugged: every view's session goes (each at its next turn)."""
    for console in list(_console._views.values()):
        console.quit = True


_debugger.when_debugging_stops(_quit_views, lambda: None)


def _current_frame(ident):
    return sys._current_frames().get(ident)


class _Ended(Exception):
    """The thread shown runs Python again: the view's command loop ends, between two commands."""


class _ViewConsole(_console.SessionConsole):
    """A view's console, which hands its session over when the thread shown stops (end())."""

    def __init__(self):
        super().__init__()
        self.thread_runs = threading.Event()
        self.done = threading.Event()
        # Set when the process is no longer debugged (`q` in another session, dpdb detach -p):
        # the thread shown will not stop, and the view's session goes.
        self.quit = False

    def end(self):
        """Called by the thread shown, as it stops for its pause: returns once the view ended."""
        self.thread_runs.set()
        self.done.wait()

    def _next_event(self, deadline):
        while not self.thread_runs.is_set() and not self.quit:
            event = _agent.wait(self.sid, _POLL_SECONDS)
            if event is not None:
                return event
            if deadline is not None and time.monotonic() > deadline:
                return None
        raise _Ended()


class _View(_debugger.Debugger):
    """pdb over another thread's frames. It runs in a thread of dpdb's, never traces anything,
    and never resumes the thread it shows: that one resumes when its C call returns."""

    def __init__(self, debugger, thread, console):
        super().__init__(console=console)
        self.holder = debugger  # the debugger that armed the pause, and owns its breakpoints
        self.shown = thread

    def show(self, frame):
        self.console.open(self._stop_info(frame, None, "waiting", self.shown))
        self.message("Paused by dpdb while %s waits in C code, at the line below: its frames "
                     "can be read now (where, up, down, p, pp, list, display). It stops at its "
                     "next Python line when the wait ends; 'interrupt' ends the wait now%s; 'c' "
                     "leaves it waiting and running on." % (
                         "the main thread" if self.shown is threading.main_thread()
                         else "thread %s" % self.shown.name, _interrupting.how(self.shown)))
        self.botframe = None  # the whole stack, down to the thread's first frame
        try:
            # pdb's interaction, not Debugger's: that one holds signals and framework state for
            # the thread that runs it, and this is not the paused thread.
            pdb.Pdb.interaction(self, frame, None)
        except _Ended:
            pass  # the thread's own stop takes the session over, unless the process was let go
        except Exception as error:  # a bug here must leave no session that nobody serves
            self.error("dpdb: the view of the waiting thread failed: %r" % (error,))
            self.console.close("view failed: %r" % (error,))
        finally:
            self.curframe_locals = None
            self.forget()
            if self.console.quit and self.console.sid is not None:  # (not its own `q`)
                self.message("dpdb: no longer debugging this process; %s goes on waiting"
                             % self.shown.name)
                self.console.close("quit: the process runs on without the debugger")
            self.console.flush()

    def _wait_for_the_thread(self):
        self.message("The thread still waits in C code: it stops at its next Python line when "
                     "the wait ends. Waiting for that (Ctrl-C: back to this prompt).")
        self.console.flush()
        # Woken now and then: a Ctrl-C of the client (a KeyboardInterrupt in this thread, which
        # pdb's command loop reports) is taken between two waits.
        while not self.console.thread_runs.wait(_POLL_SECONDS) and not self.console.quit:
            pass
        return 1

    def do_next(self, arg):
        """n(ext) | s(tep) | r(eturn) | unt(il) | j(ump)
        In a view of a thread that waits in C code: wait for the wait to end; the
        thread then stops at its next Python line, in this session.
        """
        return self._wait_for_the_thread()

    def do_continue(self, arg):
        """c(ont(inue))
        In a view of a thread that waits in C code: the pause is taken back, and the thread
        goes on waiting, then runs on as if it had not been paused.
        """
        _pause.forget_thread(self.holder, self.shown.ident)
        self.message("The pause is taken back: the thread waits as it was and runs on.")
        self.console.close("continued")
        return 1

    def do_quit(self, arg):
        """q(uit) | exit
        Stop debugging this process: clear its breakpoints and let it run on (the thread
        shown goes on waiting). Unlike pdb, dpdb never kills the program.
        """
        _debugger.stop_debugging()
        # Out now, not at the control thread's next turn: until then each armed line evaluates
        # its condition, and a signal handler's SystemExit raised in that evaluation is lost.
        _pause.drop_all(self.holder)
        self._sync_breaks()  # bdb clears only what this instance knows of (3.9 knows nothing)
        self.clear_all_breaks()
        self.message("dpdb: no longer debugging this process; it runs on, waiting as it was")
        self.console.close("quit: the process runs on without the debugger")
        return 1

    def do_interrupt(self, arg):
        """interrupt
        In a view of a thread that waits in C code: end the wait now, as Ctrl-C would. The
        main thread gets SIGINT: its call returns early and the program's own SIGINT handler
        runs (KeyboardInterrupt by default), then the thread stops at its next Python line,
        in this session. Another thread's wait cannot be ended so.
        """
        why_not = _interrupting.why_not(self.shown)
        if why_not:
            self.error("The wait cannot be ended from here: %s." % why_not)
            return None
        _interrupting.interrupt_main_thread()
        self.message("SIGINT sent to the main thread: its wait ends and the program's handler "
                     "runs.")
        return self._wait_for_the_thread()

    def do_debug(self, arg):
        """debug code
        Not in a view of a thread that waits in C code: it would run code in that thread.
        """
        self.error("debug runs code in the paused thread, which waits in C code: not here")

    do_step = do_return = do_until = do_jump = do_next
    do_s = do_r = do_unt = do_j = do_n = do_next
    do_c = do_cont = do_continue
    do_q = do_exit = do_quit
