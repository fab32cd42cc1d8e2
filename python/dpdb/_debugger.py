"""The pdb.Pdb that dpdb drives: pdb's own commands, with its console carried by the hub."""

import bdb
import code
import contextlib
import os
import pdb
import pprint
import signal
import sys
import threading
import traceback

from dpdb import _agent, _global_breaks, _identity, _logpoints, _pause, _signals, frameworks
from dpdb._inspect import Inspector
from dpdb._console import SessionConsole

try:
    from dpdb._engine import NativeEngineMixin

    _BASES = (NativeEngineMixin, pdb.Pdb)
except ImportError:  # without the native engine, bdb's own tracing does the work
    _BASES = (pdb.Pdb,)

# dpdb's own code, which runs in the program's threads (the code watch's audit hook, a logpoint's
# message, the signal handlers): never a place to stop.
_OWN_CODE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# Another debugger's code that runs in the program's threads when dpdb's calls into it: debugpy's
# server (ipykernel loads it) puts its own function in place of sys.settrace, which bdb calls
# with stepping on (3.9-3.11): its frames are nobody's step either.
_OTHER_DEBUGGERS = ("debugpy", "pydevd", "_pydevd", "_pydev")
_DEBUGGERS = _OTHER_DEBUGGERS + ("bdb", "pdb")


def _module_of(frame):
    return str(frame.f_globals.get("__name__", ""))


# bdb.effective() evaluates a condition inside a bare except and stops where it raised. One that
# is no Exception (a signal handler's sys.exit(), KeyboardInterrupt) is the program's: bdb's eval
# keeps it here, and break_here raises it in the program, as it would run without a debugger.
_escaping = threading.local()


def _eval_keeping_escapes(source, globals=None, locals=None):
    try:
        return eval(source, globals, locals)
    except Exception:
        raise
    except BaseException as error:
        _escaping.error = error
        raise


bdb.eval = _eval_keeping_escapes


def _raise_escaped():
    error = getattr(_escaping, "error", None)
    _escaping.error = None
    if error is not None:
        raise error

# Set by `q`: this process is no longer debugged, and later breakpoints let it run on. A plain
# flag (the GIL orders it), as Ctrl-C's handler reads it: code of threading's would be a place
# for a pause armed already to stop.
_stopped_debugging = False
# What else goes when it stops, and comes back when it is debugged again (the hub's
# breakpoints, which the control thread keeps): (forget, restore) pairs.
_followers = []
# Ctrl-C's handler for a press that came while the main thread still left a session that `c` or
# `q` had closed: its pause, armed there, would be one for dpdb's own code (and a new debugger's,
# while the frame goes on with this one's trace function), its KeyboardInterrupt would meet pdb's
# command loop (which says --KeyboardInterrupt-- and prompts again, with no session left to
# prompt in). It runs as the thread leaves its outermost interaction, given the frame the
# program resumes in and the debugger leaving it. Main thread only (signal handlers run there).
_when_left = None


def stopped_debugging():
    return _stopped_debugging


def stop_debugging():
    """`q`, or dpdb detach -p: later breakpoint() calls let the process run on, and the hub's
    breakpoints are no longer armed in it."""
    global _stopped_debugging
    _stopped_debugging = True
    for forget, _ in _followers:
        forget()


def when_left(frame, handler):
    """If the main thread, whose signal handler runs in `frame`, is inside a session's
    interaction: handler(frame the program resumes in, debugger) runs as it leaves; True."""
    if not _inside_interaction(frame):
        return False
    global _when_left
    _when_left = handler
    return True


def _inside_interaction(frame):
    while frame is not None:
        if frame.f_code is Debugger.interaction.__code__:
            return True
        frame = frame.f_back
    return False


def resume_debugging():
    """dpdb attach -p of a process that `q` or dpdb detach -p let go: debugged again."""
    global _stopped_debugging
    _stopped_debugging = False
    for _, restore in _followers:
        restore()


def when_debugging_stops(forget, restore):
    _followers.append((forget, restore))


def _failure_of(condition, frame):
    """What a breakpoint condition that raised raises: bdb keeps no trace of it, so the failing
    expression is evaluated once more, for its message."""
    try:
        eval(condition, frame.f_globals, frame.f_locals)
    except Exception as error:
        return "".join(traceback.format_exception_only(type(error), error)).strip()
    return "it raised, then did not when evaluated again"


class Debugger(*_BASES):
    """A pdb.Pdb whose stdin and stdout are a session console, one session per paused thread."""

    def __init__(self, console=None, **kwargs):
        self.console = console or SessionConsole()
        super().__init__(stdin=self.console, stdout=self.console, nosigint=True, **kwargs)
        self.use_rawinput = False
        self.console.main_prompt = self.prompt
        self.console.completer = self.completions
        self.console.show_location = self._show_location
        self.inspector = Inspector(self)
        self.console.inspector = self.inspector.answer
        self._post_mortem = False
        self._condition_error = None
        # The exception this session stopped for, and how: "always" (raised), "unhandled".
        self.exception = None
        self.exception_mode = None
        self._withdrawing = False
        # A frame of dpdb's own that a stop was asked for explicitly (_set_trace_at: the torch
        # strategy stops in its wrapper, then goes `up`): the one own frame a step may stop in.
        self.own_frame_to_stop = None

    # --- sessions ---------------------------------------------------------------------------

    def interaction(self, frame, traceback):
        paused = frame is not None and _pause.stopped_by_pause()
        viewed = self.console.take_over_view() if paused else None
        if viewed is False:  # the user let it go from the view just before the wait ended
            self.set_continue()
            return
        self.inspector.forget()  # references name what the last stop showed
        self.console.open(self._stop_info(frame, traceback, "pause" if paused else None))
        if viewed:
            self.message("The wait ended: paused by dpdb at the thread's next line. "
                         "(Use 'c' to resume.)")
        elif paused:
            # dpdb pause, dpdb attach -p and an IDE's pause all come this way.
            self.message("Paused by dpdb. (Use 'c' to resume.)")
        if self._condition_error:
            self.error(self._condition_error + "; stopped here, as pdb does")
            self._condition_error = None
        try:
            with frameworks.kept_while_paused(self), _signals.held_while_paused(self._tell_now):
                super().interaction(frame, traceback)
        finally:
            # A continued debugger lives on (the engine keeps it for its breakpoints): the frames
            # it stopped in are the program's again, and their locals with them. pdb kept the
            # last selected frame's locals (curframe_locals), bdb 3.13+ the frame last traced,
            # the inspector what an IDE looked at.
            self.curframe_locals = None
            self.enterframe = None
            self.inspector.forget()
            global _when_left
            if _when_left is not None and threading.current_thread() is threading.main_thread():
                caller = sys._getframe().f_back
                if not _inside_interaction(caller):
                    handler, _when_left = _when_left, None
                    handler(frame if frame is not None else caller, self)

    def forget(self):
        # pdb 3.12+ keeps $_frame (and $_retval, $_exception) in the globals of every frame it
        # selects, and as a session ends takes them out of the last one's only: after an `up`
        # (ours at torch.distributed.breakpoint(), or the user's), the frame it stopped in stayed
        # alive in its module for the rest of the process, and all its locals with it (there,
        # torch's process group, whose threads then outlived destroy_process_group() and aborted
        # the interpreter's exit). Out of every frame's globals that the session could select
        # (none yet when bdb's reset() calls this before the first stop).
        for frame, _ in getattr(self, "stack", ()):
            frame.f_globals.pop("__pdb_convenience_variables", None)
        super().forget()

    def _tell_now(self, text):
        self.message("*** " + text)
        self.console.flush()

    def bp_commands(self, frame):
        # A breakpoint's `commands` run, and may prompt, from here rather than from
        # interaction(): the session must be open for them too.
        number = getattr(self, "currentbp", False)
        if not number or number not in self.commands:
            return super().bp_commands(frame)
        if self.commands_doprompt[number]:
            self.console.open(self._stop_info(frame, None))
            return super().bp_commands(frame)
        # Commands that end by resuming (`continue`, ...) prompt nobody: a session would close
        # before any client could see what they print. They print where the program does, as
        # pdb's would.
        console, self.stdout = self.stdout, sys.stdout
        try:
            return super().bp_commands(frame)
        finally:
            self.stdout = console

    def _stop_info(self, frame, traceback, reason=None, thread=None):
        """What the hub lists of this stop; `thread`: the one stopped, if not the calling one
        (a view of a thread that waits in C code)."""
        if frame is None and traceback is not None:
            while traceback.tb_next is not None:
                traceback = traceback.tb_next
            frame, line = traceback.tb_frame, traceback.tb_lineno
        else:
            line = frame.f_lineno
        if thread is None:
            thread = threading.current_thread()
            tid = threading.get_ident()
            native_tid = getattr(threading, "get_native_id", threading.get_ident)()
        else:
            tid, native_tid = thread.ident, getattr(thread, "native_id", None)
        return {
            "tid": tid,
            "native_tid": native_tid,
            "thread": frameworks.thread_label(thread),
            "main_thread": thread is threading.main_thread(),
            "file": frame.f_code.co_filename,
            "line": line,
            "function": frame.f_code.co_name,
            # The task a Ray worker runs is known in the thread that runs it.
            "process_name": frameworks.task_name() or _identity.process_name(),
            "reason": reason or ("post-mortem" if self._post_mortem
                                 else "exception" if self.exception is not None
                                 else "breakpoint"),
        }

    def _dpdb_debugger_for_thread(self, frame):
        # The engine met a breakpoint in a thread that has no debugger (a global breakpoint, or
        # a `b` set in another thread's session): that thread gets a session of its own.
        if stopped_debugging():
            return None
        debugger = Debugger()
        debugger.prepare_to_continue(frame)
        return debugger

    # Breakpoints belong to the process, whichever debugger set them: another thread's session
    # or the hub's global ones. bdb indexes them per instance (self.breaks), so the index is
    # rebuilt from the shared Breakpoint.bplist before bdb reads it.
    def _sync_breaks(self):
        index = {}
        for filename, lineno in sorted(bdb.Breakpoint.bplist):
            index.setdefault(filename, []).append(lineno)
        self.breaks = index

    def stop_here(self, frame):
        # A step goes through dpdb's work to the program's next line. Stepping is on from
        # set_trace() on, and dpdb's work may run before that line, in this thread: the engine's
        # code copies raise the code watch's audit event, which arms the hub's breakpoints, and
        # what that calls (posixpath, linecache) is nobody's step either; nor is a logpoint's
        # message being made.
        own = frame.f_code.co_filename.startswith(_OWN_CODE)
        if own and frame is self.own_frame_to_stop:
            # Once: the debugger must not keep a frame alive (nor what its locals hold).
            self.own_frame_to_stop = None
            own = False
        if self._withdrawing or own or _global_breaks.arming_here() or _agent.log_making():
            return False
        if _module_of(frame).startswith(_OTHER_DEBUGGERS):
            self._step_over_other_debugger(frame)
            return False
        return super().stop_here(frame)

    def _step_over_other_debugger(self, frame):
        # A step that entered another debugger's code (and with it whatever that code calls:
        # posixpath, linecache) goes on as `next` in the program's frame that called into it.
        if self.stopframe is not None:
            return
        caller = frame.f_back
        while caller is not None and (caller.f_code.co_filename.startswith(_OWN_CODE)
                                      or _module_of(caller).startswith(_DEBUGGERS)):
            caller = caller.f_back
        if caller is not None:
            self._set_stopinfo(caller, None)

    def dispatch_line(self, frame):
        # A step's stop is decided before bdb looks for breakpoints (it does not, then): the
        # line's logpoints log all the same, as debugpy's do.
        logpoints = _logpoints.logpoints_at(self.canonic(frame.f_code.co_filename),
                                            frame.f_lineno)
        if logpoints and self.stop_here(frame):
            _logpoints.serve(logpoints, frame)
        return super().dispatch_line(frame)

    def break_here(self, frame):
        # bdb.Bdb.break_here, keeping the flag that effective() returns: (bp, False) means the
        # condition raised. bdb stops there without a word; the user is told why at the prompt.
        self._sync_breaks()
        filename = self.canonic(frame.f_code.co_filename)
        lines = self.breaks.get(filename, ())
        lineno = frame.f_lineno if frame.f_lineno in lines else frame.f_code.co_firstlineno
        if lineno not in lines:
            return False
        logpoints = _logpoints.logpoints_at(filename, lineno)
        if logpoints:
            _logpoints.serve(logpoints, frame)
            if len(logpoints) == len(bdb.Breakpoint.bplist.get((filename, lineno), ())):
                return False
        _escaping.error = None  # runeval's, say: bdb's other eval
        bp, flag = self._effective_without(logpoints, filename, lineno, frame)
        _raise_escaped()
        if not bp:
            return False
        self.currentbp = bp.number
        if flag and bp.temporary:
            self.do_clear(str(bp.number))
        if bp.cond and not flag:
            self._condition_error = "Error in condition of breakpoint %d (%s): %s" % (
                bp.number, bp.cond, _failure_of(bp.cond, frame))
        return True

    @staticmethod
    def _effective_without(logpoints, filename, lineno, frame):
        # bdb.effective() decides among every breakpoint of the line; the logpoints, served
        # already, are out of it for the moment (bdb skips disabled breakpoints).
        enabled = [bp.enabled for bp in logpoints]
        for bp in logpoints:
            bp.enabled = False
        try:
            return bdb.effective(filename, lineno, frame)
        finally:
            for bp, was in zip(logpoints, enabled):
                bp.enabled = was

    def break_anywhere(self, frame):
        self._sync_breaks()
        return super().break_anywhere(frame)

    def clear_break(self, filename, lineno):
        self._sync_breaks()
        return super().clear_break(filename, lineno)

    def clear_bpbynumber(self, arg):
        # A hub breakpoint is filed whole into the process's list, not through this instance's
        # index, which bdb prunes here (a KeyError once left a detached process armed and an
        # IDE's terminate without its SIGTERM).
        self._sync_breaks()
        return super().clear_bpbynumber(arg)

    def _show_location(self):
        if getattr(self, "stack", None) and 0 <= self.curindex < len(self.stack):
            self.print_stack_entry(self.stack[self.curindex])

    def set_continue(self):
        super().set_continue()
        self.console.close("continued")

    def withdraw(self):
        """Takes back a pause set_trace() armed that has not stopped yet (from a signal handler in
        the thread it was armed for): the code that runs to do so is no place to stop."""
        self._withdrawing = True
        try:
            self.set_continue()
        finally:
            self._withdrawing = False

    def post_mortem(self, traceback, exception=None, mode="unhandled"):
        self._post_mortem = True
        self.exception, self.exception_mode = exception, mode
        self.reset()
        try:
            self.interaction(None, traceback)
        finally:
            self.console.close("post-mortem ended")

    @classmethod
    def uncaught_stop(cls, exc_type, exc_value, traceback, header=None, mode="unhandled"):
        """The hub's uncaught-exception breakpoint: a post-mortem session, as --post-mortem's
        (a framework's exception with the framework's line first)."""
        if stopped_debugging():
            return
        debugger = cls()
        if header is not None:
            debugger.message(header)
        debugger.post_mortem(traceback, exc_value, mode)

    def raised_stop(self, frame, exception):
        """The hub's raised-exception breakpoint: a session at the line that raises, before any
        handler runs; `c` lets the exception go on, a step goes on from here."""
        if stopped_debugging():
            return
        self.prepare_to_continue(frame)
        self.exception, self.exception_mode = exception, "always"
        self.user_exception(frame, (type(exception), exception, exception.__traceback__))
        self.exception = None  # its later stops are a step's
        if self.stoplineno != -1:
            # A step: the next line this thread runs, wherever the exception takes it (a handler,
            # or a caller's), as after breakpoint(); this stop came from no line of pdb's.
            self.set_trace(frame)

    # --- commands that differ from pdb's, and why --------------------------------------------

    def do_quit(self, arg):
        """q(uit) | exit
        Stop debugging this process: clear its breakpoints and let it run on.
        Unlike pdb, dpdb never kills the program (it may be somebody's service);
        later breakpoint() calls in this process are ignored.
        """
        stop_debugging()
        self.clear_all_breaks()
        # What Ctrl-C does from now on, if dpdb's handler has it (start-up's, see _ctrl_c).
        ctrl_c = getattr(signal.getsignal(signal.SIGINT), "after_quit", "")
        self.message("dpdb: no longer debugging process %d; it runs on%s" % (os.getpid(), ctrl_c))
        super().set_continue()
        self.console.close("quit: the process runs on without the debugger")
        return 1

    do_q = do_exit = do_quit

    def do_logpoint(self, arg):
        """logpoint [FILENAME:]LINENO | FUNCTION MESSAGE
        A breakpoint that never stops: when the line runs, MESSAGE is sent to the hub
        (`dpdb logs` shows it; `dpdb run` prints it), its {expr} parts evaluated in the
        frame as in an f-string. `condition N EXPR` makes it conditional, `clear N` removes it.
        """
        location, _, template = arg.strip().partition(" ")
        if not location or not template.strip():
            self.error("usage: logpoint [FILENAME:]LINENO MESSAGE")
            return
        if "," in location:
            self.error("usage: logpoint [FILENAME:]LINENO MESSAGE (a condition comes after it: "
                       "condition N EXPR)")
            return
        try:
            message = _logpoints.Message(template.strip())
        except SyntaxError as error:
            self.error("logpoint message: %s" % error.msg)
            return
        before = len(bdb.Breakpoint.bpbynumber)
        # Filed with a condition that never holds until its message is attached: another thread
        # that reached the line in between would have stopped there, as at a plain breakpoint.
        self.do_break(location + ", False")
        if len(bdb.Breakpoint.bpbynumber) == before:
            return  # do_break said why
        bp = bdb.Breakpoint.bpbynumber[-1]
        bp.dpdb_log = message
        bp.cond = None
        self._dpdb_breaks_changed()
        self.message("Logpoint %d: %s" % (bp.number, message.template))

    def do_EOF(self, arg):
        # A client's end of input detaches (the client says so); EOF here comes only from a
        # nested prompt that pdb itself does not handle, so behave like pdb's EOF: a new line.
        self.message("")
        self.lastcmd = ""

    do_EOF.__doc__ = pdb.Pdb.do_EOF.__doc__  # `help` lists it among pdb's documented commands

    def help_detach(self):
        self.message("detach\n"
                     "Leave this session paused and listed; any client may attach again later\n"
                     "(`dpdb attach N`). Ctrl-D at the prompt does the same.\n"
                     "Handled by the dpdb client, with `sessions` (list the paused sessions) and\n"
                     "`switch N` (go to another paused session).")

    help_sessions = help_switch = help_detach

    def do_interact(self, arg):
        # pdb's interact reads and writes the process's own stdio, which belong to the program,
        # not to the debugging user.
        with self._console_as_stdio():
            super().do_interact(arg)

    do_interact.__doc__ = pdb.Pdb.do_interact.__doc__

    def do_clear(self, arg):
        # pdb asks "Clear all breaks?" with the builtin input(), which would read and write the
        # process's own stdio: the question is for the debugging user, at the client.
        with self._console_as_stdio():
            return super().do_clear(arg)

    do_clear.__doc__ = pdb.Pdb.do_clear.__doc__  # `help clear` is pdb's
    do_cl = do_clear

    def do_pp(self, arg):
        """pp expression
        Pretty-print the value of the expression, as wide as the client's terminal.
        """
        try:
            value = self._getval(arg)
        except Exception:
            return
        self.message(pprint.pformat(value, width=self.console.columns))

    complete_pp = getattr(pdb.Pdb, "complete_pp", None) or pdb.Pdb.completedefault

    @contextlib.contextmanager
    def _console_as_stdio(self):
        saved = sys.stdin, sys.stdout, sys.stderr
        sys.stdin = sys.stdout = sys.stderr = self.console
        try:
            yield
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved

    # --- completion, answered for the client's line editor ------------------------------------

    def completions(self, text, line, begidx, endidx):
        """cmd.Cmd.complete without readline: the client sends the line and the word bounds."""
        stripped = len(line) - len(line.lstrip())
        begidx -= stripped
        endidx -= stripped
        line = line.lstrip()
        if begidx > 0:
            command, _, _ = self.parseline(line)
            if command == "":
                complete = self.completedefault
            else:
                complete = getattr(self, "complete_" + command, self.completedefault)
        else:
            complete = self.completenames
        return list(complete(text, line, begidx, endidx) or [])
