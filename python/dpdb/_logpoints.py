"""Logpoints: breakpoints that never stop. When a logpoint's line runs (and its condition holds),
its message is made in the frame, as an f-string would be, and sent to the hub.

The program never waits for the hub: a message goes into a bounded queue of this process, in the
agent, which a thread of the agent's own (`dpdb-logs`) sends in batches. Beyond a rate
(`DPDB_LOG_RATE` a second, in bursts of as many) or a full queue (`DPDB_LOG_QUEUE`), messages are
dropped without being made, and the next batch says how many ("… 120 messages dropped"). A field that raises puts the error in
the message, and nothing else changes. What is queued when the process ends is sent then, waiting
at most a second: at exit, at os._exit (which multiprocessing's children leave by), and at a
SIGTERM or SIGHUP that the program leaves at its default action (a Pool's terminate() sends
SIGTERM), which then ends the process as it would have; and at a fatal signal (SIGSEGV, SIGABRT…)
the agent's crash path sends it before the crash report.
"""

import atexit
import bdb
import os
import threading
import time

from dpdb import _agent

_RATE = max(1.0, float(os.environ.get("DPDB_LOG_RATE", "200")))
_QUEUE = max(1, int(os.environ.get("DPDB_LOG_QUEUE", "1000")))
_EXIT_WAIT = 1.0        # at exit: how long the queue may hold the process
# ... and how long a process that has messages but no connection yet waits for one: a worker
# forked just before its pool was terminated is still making its first, and on a loaded machine
# that took more than half a second (its messages were lost 1 run in 7).
_CONNECT_WAIT_AT_END = 3.0
_TEXT_LIMIT = 4096      # characters of a message (the hub cuts it there too)


# --- messages: an f-string made one field at a time ------------------------------------------

class Message:
    """A logpoint's message, compiled once: literal text and `{expr[!conv][:spec]}` fields, each
    field compiled on its own so that one that raises spoils only itself."""

    def __init__(self, template):
        self.template = template
        self.parts = _parse(template)

    def render(self, frame):
        out = []
        scope = None  # f_locals builds a mapping: once per message
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            code, source = part
            if scope is None:
                scope = frame.f_locals
            try:
                out.append(eval(code, frame.f_globals, scope))
            except Exception as error:
                out.append("<%s raised %s: %s>" % (source, type(error).__name__, error))
        return "".join(out)


def _parse(template):
    """[literal str | (code, source)]; raises SyntaxError with a one-line reason."""
    parts, literal, i = [], [], 0
    while i < len(template):
        char = template[i]
        if char in "{}" and template.startswith(char * 2, i):
            literal.append(char)
            i += 2
        elif char == "}":
            raise SyntaxError("single '}' at character %d (write '}}' for a brace)" % (i + 1))
        elif char == "{":
            end = _field_end(template, i + 1)
            source = template[i + 1:end].strip()
            if not source:
                raise SyntaxError("empty {} at character %d" % (i + 1))
            try:
                code = compile(_as_fstring(template[i + 1:end]), "<logpoint>", "eval")
            except SyntaxError as error:
                raise SyntaxError("{%s}: %s" % (source, error.msg)) from None
            parts.append("".join(literal))
            literal = []
            parts.append((code, source))
            i = end + 1
        else:
            literal.append(char)
            i += 1
    parts.append("".join(literal))
    return [p for p in parts if p != ""]


def _field_end(template, start):
    """The index of the '}' that closes the field starting at `start` (brackets and strings
    inside it skipped)."""
    depth, quote, i = 0, None, start
    while i < len(template):
        char = template[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            if char == "}" and depth == 0:
                return i
            depth -= 1
        i += 1
    raise SyntaxError("'{' at character %d is never closed" % start)


def _as_fstring(field):
    quote = "'''" if "'''" not in field and not field.endswith("'") else '"""'
    return "f%s{%s}%s" % (quote, field, quote)


# --- which logpoints are due at a line -----------------------------------------------------------

def logpoints_at(filename, lineno):
    return [b for b in bdb.Breakpoint.bplist.get((filename, lineno), ())
            if getattr(b, "dpdb_log", None) is not None]


def serve(logpoints, frame):
    """Sends the message of each logpoint that is due, as bdb would decide a stop (enabled, the
    function, hit count, condition, ignore count). A condition that raises never stops here: the
    message is sent, saying so."""
    for bp in logpoints:
        if not bp.enabled or not bdb.checkfuncname(bp, frame):
            continue
        bp.hits += 1
        note = ""
        if bp.cond:
            try:
                if not eval(bp.cond, frame.f_globals, frame.f_locals):
                    continue
            except Exception as error:
                note = "<condition %s raised %s: %s> " % (bp.cond, type(error).__name__, error)
        if bp.ignore > 0:
            bp.ignore -= 1
            continue
        emit(bp, frame, note)


# --- the queue and its sender --------------------------------------------------------------------

# The tokens, the drops, whether a thread is making a message, the queue of encoded lines and its
# sender thread live in the agent (src/agent/log_budget.hpp, log_queue.hpp): the engine reads the
# budget too, and the agent's crash path sends the queue when no Python may run.
_agent.log_budget_rate(_RATE)
_agent.log_queue_capacity(_QUEUE)


def emit(bp, frame, note=""):
    # A field whose code reaches a logpoint makes no second message.
    if _agent.log_making():
        return
    now = time.time()
    if not _agent.log_admit():
        return
    _agent.log_set_making(True)
    try:
        text = note + bp.dpdb_log.render(frame)
    finally:
        _agent.log_set_making(False)
    if len(text) > _TEXT_LIMIT:
        text = text[:_TEXT_LIMIT] + "…"
    thread = threading.current_thread()
    _agent.log_push(
        now,
        # What the wire carries must be UTF-8: a lone surrogate becomes its escape.
        text.encode("utf-8", "backslashreplace").decode("utf-8"),
        thread.name.encode("utf-8", "backslashreplace").decode("utf-8"),
        threading.get_native_id() if hasattr(threading, "get_native_id") else thread.ident,
        getattr(bp, "dpdb_global", None))  # the number `dpdb break --list` shows


def flush():
    """At the end of the process: what is queued goes now, within _EXIT_WAIT."""
    try:
        _agent.log_flush(_EXIT_WAIT, _CONNECT_WAIT_AT_END)
    except Exception:
        pass  # exiting: nothing may escape


atexit.register(flush)


def flush_at_ending_signals():
    """At start-up: a SIGTERM or SIGHUP that the program leaves at its default action sends what
    is queued first. The agent's reader thread does it, not a Python handler, which would wait for
    the main thread to run bytecode (see faults.hpp). A handler the program sets later replaces
    this one."""
    _agent.flush_at_ending_signals(_EXIT_WAIT, _CONNECT_WAIT_AT_END)
