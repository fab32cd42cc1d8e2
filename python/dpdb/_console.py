"""A paused thread's console: the file-like stdin and stdout that pdb talks to, carried through
the hub to whichever client is attached."""

import json
import os
import sys
import threading
import time

from dpdb import _agent, _identity, _program_output, _signals

_FLUSH_BYTES = 16 * 1024
_PIECE_CHARACTERS = 64 * 1024
_FLUSH_SECONDS = 0.05
_HUB_CHECK_SECONDS = 0.5


class WaitPolicy:
    """What a paused thread does while nobody is attached: DPDB_WAIT is `hub:N` (the default,
    N = 60: as long as it takes once a hub has the session; while no hub is connected, N seconds
    for one, then continue: the job never waits on the debugger), `forever`, `N` or `continue:N`
    (continue after N seconds), or `exit:N` (exit the process after N)."""

    DEFAULT = "hub:60"

    def __init__(self, text):
        action, _, seconds = (text or self.DEFAULT).partition(":")
        if not seconds and action.replace(".", "", 1).isdigit():
            action, seconds = "continue", action
        if (action not in ("forever", "continue", "exit", "hub")
                or (action != "forever" and not seconds.replace(".", "", 1).isdigit())):
            raise ValueError("DPDB_WAIT=%r is not hub:N, forever, N, continue:N or exit:N" % text)
        self.action = action
        self.seconds = float(seconds) if seconds else None

    @classmethod
    def from_environment(cls):
        try:
            return cls(os.environ.get("DPDB_WAIT", cls.DEFAULT))
        except ValueError as error:
            sys.stderr.write("dpdb: %s; using %s\n" % (error, cls.DEFAULT))
            return cls(cls.DEFAULT)

    def describe(self):
        if self.action == "forever":
            return "as long as it takes"
        if self.action == "hub":
            return "%gs for a hub, then continues" % self.seconds
        return "%gs, then %s" % (self.seconds, "continues" if self.action == "continue" else "exits")


# Sessions whose thread runs a command the client sent (it is not waiting for a line): session
# id -> thread ident. Changed and read only with the GIL held.
_running = {}


# Open sessions: session id -> the ident of the paused thread. Changed and read with the GIL held.
_open = {}
# How many sessions the main thread opened: whether a Ctrl-C's pause has landed yet.
_main_thread_opened = 0
# Sessions opened over a thread that waits in C code, by a view run in a thread of dpdb's
# (_waiting_view), by the ident of the thread shown: its pause's stop takes the session over.
_views = {}


def main_thread_sessions_opened():
    return _main_thread_opened


def in_a_session():
    """Whether the calling thread is paused in a session (at its prompt, or running a command)."""
    return threading.get_ident() in _open.values()


def interrupt(sid):
    """Ctrl-C at the client while session `sid` runs a command: KeyboardInterrupt in its thread,
    which pdb's command loop reports ("--KeyboardInterrupt--") before prompting again. A thread
    blocked in C code (a sleep, a read) gets it when the call returns."""
    ident = _running.get(sid)
    if ident is not None:
        _agent.interrupt_thread(ident)


class SessionConsole:
    """stdin and stdout for one Debugger. Output is buffered and sent while a client is attached;
    before the first attach it is kept, so the client sees the stop as it happened."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self):
        self.sid = None
        self.attached = False
        self.columns = 80
        self.completer = lambda text, line, begidx, endidx: []
        self.show_location = lambda: None
        # Structured questions of an IDE's client (`dpdb dap`), answered between two lines.
        self.inspector = lambda request: {"error": "this session answers no inspect requests"}
        self.main_prompt = "(Pdb) "
        self._pending = []
        self._pending_size = 0
        self._pending_since = None
        self._policy = WaitPolicy.from_environment()
        self._hub_has_had_it = False  # DPDB_WAIT=hub:N: a hub was connected while it was open

    # --- session life ---------------------------------------------------------------------

    def open(self, info):
        _identity.refresh()
        if self.sid is None:
            # What the agent's outbox holds (the breakpoints armed) first: the hub hears of a
            # breakpoint before a stop at it.
            _agent.outbox_drain()
            self.sid = _agent.open_session(json.dumps(info))
            self._opened_here()
            self.attached = False
            self._hub_has_had_it = False
            self._announce_wait(info)
        else:
            _agent.update_session(self.sid, json.dumps(info))

    def _opened_here(self):
        _open[self.sid] = threading.get_ident()
        if threading.current_thread() is threading.main_thread():
            global _main_thread_opened
            _main_thread_opened += 1

    def take_over_view(self):
        """A thread that stops for its pause: the session a view opened over it while it waited
        in C code becomes this console's, attached as it was (open() then updates it): True.
        None if there was no view; False if its session had ended (`c` or `q` in the view just
        before the wait did)."""
        view = _views.get(threading.get_ident())
        if view is None:
            return None
        view.end()
        if view.sid is None:
            return False
        self.sid, self.attached, self.columns = view.sid, view.attached, view.columns
        self._hub_has_had_it = view._hub_has_had_it
        self._pending = view._pending + self._pending
        self._pending_size += view._pending_size
        view.sid = None
        self._opened_here()
        return True

    def close(self, reason):
        if self.sid is None:
            return
        _running.pop(self.sid, None)
        _open.pop(self.sid, None)
        if self._pending and not self._pending[-1].endswith("\n"):
            self._pending.append("\n")  # the last words before resuming are whole lines
        self.flush()
        _agent.close_session(self.sid, reason)
        self.sid = None
        self.attached = False

    def _announce_wait(self, info):
        if _agent.connected():
            return
        hub = os.environ.get("DPDB_HUB", "(DPDB_HUB is not set)")
        _program_output.notice(
            "dpdb: pid %d paused at %s:%s and waits for a client of the hub at %s (not connected "
            "yet); per DPDB_WAIT it waits %s\n" % (
                os.getpid(), info.get("file"), info.get("line"), hub, self._policy.describe()))

    # --- file protocol --------------------------------------------------------------------

    def write(self, text):
        if not text:
            return 0
        self._pending.append(text)
        self._pending_size += len(text)
        now = time.monotonic()
        if self._pending_since is None:
            self._pending_since = now
        if self._pending_size > _FLUSH_BYTES or now - self._pending_since > _FLUSH_SECONDS:
            self.flush()
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        # Only whole lines: an unfinished last line may be the prompt that readline() sends.
        if not self._pending or not self.attached or self.sid is None:
            return
        text = "".join(self._pending)
        complete, newline, partial = text.rpartition("\n")
        if not newline:
            return
        self._pending = [partial] if partial else []
        self._pending_size = len(partial)
        self._pending_since = time.monotonic() if partial else None
        text = complete + newline
        # In pieces that fit a frame (1 MiB) whatever JSON makes of them (up to 12 bytes a
        # character): a command that prints 80 MB sends it as a terminal would take it.
        for start in range(0, len(text), _PIECE_CHARACTERS):
            piece = text[start:start + _PIECE_CHARACTERS]
            _agent.send("output", self.sid, json.dumps({"text": piece}))

    def isatty(self):
        return False

    def readable(self):
        return True

    def writable(self):
        return True

    def readline(self, size=-1):
        # The unfinished last line written is the prompt: "(Pdb) ", "(com) ", "...   ", or
        # whatever input() was given. Sending it as a prompt lets the client edit the line.
        _running.pop(self.sid, None)
        text = "".join(self._pending)
        head, newline, prompt = text.rpartition("\n")
        self._pending = [head + newline] if newline else []
        self._pending_size = len(head) + len(newline)
        return self._read_line(prompt)

    # --- waiting for the client -----------------------------------------------------------

    def _read_line(self, prompt):
        nested = prompt != self.main_prompt
        deadline = self._deadline()
        show_prompt = True
        while True:
            if self.attached and show_prompt:
                self.flush()
                _agent.send("prompt", self.sid, json.dumps({"text": prompt, "nested": nested}))
            # Only a client that (re)attaches needs the prompt again. Another one after a
            # completion would reach the client while it still edits the line, and make it show
            # a prompt, and send a line, that nobody reads.
            show_prompt = False
            event = self._next_event(deadline)
            if event is None:  # nobody attached in time
                return self._give_up(prompt)
            kind, body = event
            message = json.loads(body)
            if kind == "attach":
                # The same client again, whose terminal changed size: only the width is news.
                again = self.attached
                self.attached = True
                self.columns = max(20, int(message.get("cols", 80)))
                if not again:
                    if not self._pending:
                        self.show_location()
                    show_prompt = True
                deadline = None
            elif kind in ("detach", "lost"):
                self.attached = False
                deadline = self._deadline()
                continue
            elif kind == "input":
                _running[self.sid] = threading.get_ident()
                if message.get("eof"):
                    return ""
                return message["line"] + "\n"
            elif kind == "inspect":
                body = self.inspector(message["request"])
                _agent.send("inspect_reply", self.sid,
                            json.dumps({"id": message["id"], "body": body}))
                continue
            elif kind == "complete":
                matches = self._complete(message)
                _agent.send("completions", self.sid,
                            json.dumps({"id": message["id"], "matches": matches}))
                continue
            else:
                continue

    def _deadline(self):
        if self._policy.seconds is None or self._hub_has_session():
            return None
        return time.monotonic() + self._policy.seconds

    def _hub_has_session(self):
        """DPDB_WAIT=hub:N: once a hub has had the session, it waits for a client as long as it
        takes, through hub restarts and network cuts too."""
        if self._policy.action != "hub":
            return False
        if not self._hub_has_had_it and _agent.connected():
            self._hub_has_had_it = True
        return self._hub_has_had_it

    def _next_event(self, deadline):
        # A paused main thread wakes now and then: the signals it holds are noticed in between.
        wake = _signals.WAKE_SECONDS if _signals.holding() else None
        if self._policy.action == "hub":  # and one waiting for a hub notices it come
            wake = min(wake or _HUB_CHECK_SECONDS, _HUB_CHECK_SECONDS)
        while True:
            if deadline is not None and self._hub_has_session():
                deadline = None
            if deadline is None:
                event = _agent.wait(self.sid, wake)
            else:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                event = _agent.wait(self.sid, min(left, wake or left))
            if event is not None:
                return event

    def _give_up(self, prompt):
        _program_output.notice("dpdb: pid %d: no %s within %gs (DPDB_WAIT); %s\n" % (
            os.getpid(), "hub connected" if self._policy.action == "hub" else "client attached",
            self._policy.seconds, "exiting" if self._policy.action == "exit" else "continuing"))
        if self._policy.action == "exit":
            os._exit(1)
        return "continue\n" if prompt == self.main_prompt else ""

    def _complete(self, message):
        try:
            matches = self.completer(message["text"], message["line"],
                                     message["begidx"], message["endidx"])
        except Exception:  # a completer bug must never break the session
            return []
        return [m for m in matches or [] if isinstance(m, str)][:1000]
