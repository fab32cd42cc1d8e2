"""The process's control thread: carries out what the hub asks of the process as a whole —
global breakpoints, stacks of every thread, pause — while the program runs. It waits in C++ with
the GIL released, so it costs nothing between requests."""

import bdb
import cmd
import json
import os
import pdb
import signal
import sys
import threading
import traceback

from dpdb import (_agent, _console, _debugger, _identity, _on_import, _pause, _program_output,
                  _waiting_view, frameworks)
from dpdb._global_breaks import GlobalBreakpoints

# How often pending breakpoints are looked for again, besides when their file's code appears:
# function breakpoints, and code that runs without an exec the code watch sees.
_RECHECK_SECONDS = 1.0
# How long a process that starts waits for the hub's breakpoints before its program runs: a
# line that runs right after start-up must stop too. Connecting takes milliseconds; a hub that
# is not there costs nothing (the first attempt fails at once). The bound is for a machine that
# stalls: CI's, loaded, once took more than 2 s to start a child's connection.
_FIRST_LIST_WAIT = float(os.environ.get("DPDB_START_WAIT", "5"))

_started_in = None  # the pid whose control thread runs: after fork the child needs its own
_control = None  # the process's one _Control, inherited by forked children
_dump_signal = None  # faulthandler's, once registered


def start():
    global _started_in, _control
    if _started_in == os.getpid():
        return
    _started_in = os.getpid()
    _report_faults()
    if _control is None:
        _control = _Control()
    thread = threading.Thread(target=_control.run, name="dpdb-control", daemon=True)
    _agent.start_own_thread(thread, "control")


def stop():
    """Undoes start() and the link's start, after a start-up that failed: no thread of dpdb's,
    no signal handler of its own is left in the process."""
    global _started_in, _dump_signal
    if _started_in != os.getpid():
        return
    _started_in = None
    _agent.stop()  # the control thread is handed "stop" and ends
    if _dump_signal is not None:
        import faulthandler

        faulthandler.unregister(_dump_signal)
        _dump_signal = None
    _agent.disable_dumps()


def wait_for_breakpoints():
    """At start-up: returns once the hub's breakpoints are armed here (bounded), or at once if
    no hub answered the first attempt to connect."""
    if _control is not None and _agent.wait_first_attempt(_FIRST_LIST_WAIT):
        _control.first_list.wait(_FIRST_LIST_WAIT)


def _report_faults():
    """faulthandler on a spare real-time signal writes every thread's stack into the agent's
    pipe, without the GIL: for stacks when Python cannot answer, and for fatal signals. The
    program's own faulthandler and signal handlers keep working (ours pass signals on)."""
    global _dump_signal
    import faulthandler

    try:
        number = int(os.environ.get("DPDB_DUMP_SIGNAL", signal.SIGRTMIN + 7))
        faulthandler.register(number, file=_agent.dump_pipe(), all_threads=True, chain=False)
    except (ValueError, OSError, RuntimeError) as error:
        sys.stderr.write("dpdb: no stacks without the GIL in pid %d: %s\n" % (os.getpid(), error))
        return
    _dump_signal = number
    _agent.enable_dumps(number)
    if os.environ.get("DPDB_CRASH_REPORTS", "1") != "0":
        _agent.install_crash_handlers()


class _Control:
    """What the control thread does. One per process, kept across fork(): a forked child's
    control thread carries on with the parent's breakpoints (which it inherited)."""

    def __init__(self):
        self.debugger = None
        self.breakpoints = GlobalBreakpoints(self.holder)
        self.first_list = threading.Event()
        # `q` at any prompt, or dpdb detach -p: the hub's breakpoints go out for good.
        _debugger.when_debugging_stops(self.breakpoints.stop, self.breakpoints.resume)
        _debugger.when_debugging_stops(_pause.stop_debugging, _pause.resume_debugging)

    def run(self):
        while True:
            event = _agent.wait_control(_RECHECK_SECONDS)
            try:
                # A signal handler the main thread did not run before it blocked (CPython's
                # race, which dpdb's threads widen): its wait is interrupted (agent/signal_kick).
                _agent.kick_overdue_signal()
                if _pause.any_asked() and not _pause.debugged():
                    _pause.drop_all(self.debugger)  # `q` in another thread's session
                if _pause.any_done():
                    _pause.drop_done(self.debugger)
                if event is None:
                    _on_import.catch_up()
                    self.breakpoints.recheck()
                    _identity.refresh()
                    continue
                kind, body = event
                if kind == "stop":
                    return
                message = json.loads(body)
                if kind == "breakpoints":
                    self.breakpoints.update(message["list"], message.get("version"))
                    self.first_list.set()
                elif kind == "stacks_request":
                    _agent.stacks_started(message["req"])
                    reply = {"req": message["req"], "stacks": stacks(message.get("gil"))}
                    _agent.stacks_answered(message["req"])
                    _agent.send_process("stacks_reply", json.dumps(reply))
                elif kind == "pause":
                    asked = 0
                    try:
                        asked = self.pause(message.get("all_threads", False),
                                           message.get("view", False))
                    finally:  # the client waits for this before it says or does anything more
                        _agent.send_process("pause_armed", json.dumps({"threads": asked}))
                elif kind == "interrupt":
                    _console.interrupt(message["sid"])
                elif kind == "release":
                    try:
                        self.release()
                    finally:  # answered whatever happened: the client is told either way
                        _agent.send_process("released", "{}")
                elif kind == "debug":
                    _debugger.resume_debugging()
                elif kind == "copy_output":
                    _program_output.copy(message.get("on") is True)
                elif kind == "terminate":
                    # An IDE's terminate: the job ends as under a supervisor, by SIGTERM, once
                    # no thread is held paused (a paused main thread would keep the signal).
                    try:
                        self.release()
                    finally:  # the job ends as asked, even if taking dpdb out failed
                        os.kill(os.getpid(), signal.SIGTERM)
            except Exception as error:  # the program must never pay for a bug here
                _program_output.notice("dpdb: control thread: %r\n" % (error,))

    def release(self):
        """dpdb detach -p: this process is no longer debugged (as after `q` at a prompt, which
        every paused thread has been sent): its breakpoints go, later ones are not armed."""
        _debugger.stop_debugging()
        if self.debugger is not None:
            _pause.drop_all(self.debugger)
            self.debugger.clear_all_breaks()

    def holder(self):
        """The debugger that owns the global breakpoints: attached to the engine from this
        thread, in continue state, so that a hit in any thread gets a session of its own."""
        if self.debugger is None:
            self.debugger = _debugger.Debugger()
            if not self.debugger.engine_serve_breakpoints():
                _program_output.notice("dpdb: global breakpoints need the native engine "
                                       "(DPDB_ENGINE=bdb watches no other thread)\n")
        return self.debugger

    def pause(self, all_threads, view):
        """Returns how many threads are asked to pause."""
        debugger = self.holder()
        asked = _pause.ask(debugger, all_threads)
        for ident, frame in asked:
            if view:  # one that waits in C code gets its session at once, over its frames
                _waiting_view.watch(debugger, ident, frame)
        return len(asked)


def _gil_role(gil, holder, ident, native_id):
    """What the thread was doing with the GIL when the request arrived (seen by the agent's I/O
    thread, before this one took the GIL to answer)."""
    if not gil:
        return None
    if holder == ident:
        return "holds the GIL"
    if native_id in gil.get("waiting", ()):
        return "waits for the GIL"
    return None


# The debugger's own code, which a paused thread runs above the user's.
_DEBUGGER_FILES = tuple(os.path.join(os.path.dirname(m.__file__), "")
                        for m in (sys.modules["dpdb"],)) + tuple(
    os.path.splitext(m.__file__)[0] + ".py" for m in (bdb, pdb, cmd))


def _debugger_frames(summary):
    """How many of the innermost frames are the debugger's (a paused thread's prompt)."""
    count = 0
    for f in reversed(summary):
        if not f.filename.startswith(_DEBUGGER_FILES):
            break
        count += 1
    return count if count < len(summary) else 0


def stacks(gil=None):
    """Every thread's Python stack, as text and as frames, without pausing anything; dpdb's own
    threads are left out, and gevent's suspended greenlets follow the threads."""
    frames = sys._current_frames()
    names = frameworks.threads_by_os_ident(frames)
    me = frameworks.os_thread_ident()
    running, suspended = frameworks.greenlets_now()
    # The greenlet the main thread runs, where it can only be that one.
    in_greenlet = ", in greenlet %s" % running[0] if len(running) == 1 else ""
    # The I/O thread only saw which thread state held the GIL; naming it takes the GIL, held here.
    holder = gil and gil.get("holder_state") and _agent.thread_of_gil_state(gil["holder_state"])
    threads = []
    lines = []
    every_line = []  # the same, with the debugger's frames of paused threads
    for ident, frame in frames.items():
        thread = names.get(ident)
        if ident == me or (thread and thread.name.startswith("dpdb-")):
            continue
        name = thread.name if thread else "?"
        native = getattr(thread, "native_id", None) if thread else None
        role = _gil_role(gil, holder, ident, native)
        summary = traceback.extract_stack(frame)
        hidden = _debugger_frames(summary)
        threads.append({
            "ident": ident, "name": name, "native_id": native,
            "daemon": bool(thread and thread.daemon), "gil": role,
            "frames": [{"file": f.filename, "line": f.lineno, "function": f.name,
                        "code": f.line or "", "debugger": i >= len(summary) - hidden}
                       for i, f in enumerate(summary)],
        })
        _add_stack("  Thread %s (%s%s)%s%s, most recent call last:" % (
            name, ident, ", native %s" % native if native else "",
            in_greenlet if thread is threading.main_thread() else "",
            " [%s]" % role if role else ""), summary, hidden, lines, every_line)
    for name, frame in suspended:
        _add_stack("  Greenlet %s (suspended), most recent call last:" % name,
                   traceback.extract_stack(frame), 0, lines, every_line)
    reply = {"threads": threads, "text": "\n".join(lines)}
    if every_line != lines:
        reply["text_with_debugger"] = "\n".join(every_line)
    return reply


def _add_stack(heading, summary, hidden, lines, every_line):
    """One stack's text: to every_line whole, to lines without its `hidden` innermost frames."""
    lines.append(heading)
    every_line.append(heading)
    for i, f in enumerate(summary):
        text = ['    File "%s", line %s, in %s' % (f.filename, f.lineno, f.name)]
        if f.line:
            text.append("      " + f.line.strip())
        every_line.extend(text)
        if i < len(summary) - hidden:
            lines.extend(text)
    if hidden:
        lines.append("    (paused by the debugger: %d frames of dpdb, pdb and bdb above "
                     "are hidden; `dpdb stacks --debugger-frames` shows them)" % hidden)
