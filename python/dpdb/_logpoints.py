"""Logpoints: breakpoints that never stop. When a logpoint's line runs (and its condition holds),
its message is made in the frame, as an f-string would be, and sent to the hub.

The program never waits for the hub: a message goes into a bounded queue of this process, which a
thread of dpdb's own (`dpdb-logs`) sends in batches. Beyond a rate (`DPDB_LOG_RATE` a second, in
bursts of as many) or a full queue (`DPDB_LOG_QUEUE`), messages are dropped without being made,
and the next batch says how many ("… 120 messages dropped"). A field that raises puts the error in
the message, and nothing else changes. What is queued when the process ends is sent then, waiting
at most a second: at exit, at os._exit (which multiprocessing's children leave by), and at a
SIGTERM or SIGHUP that the program leaves at its default action (a Pool's terminate() sends
SIGTERM), which then ends the process as it would have.
"""

import atexit
import bdb
import collections
import json
import os
import signal
import sys
import threading
import time

from dpdb import _agent

_RATE = max(1.0, float(os.environ.get("DPDB_LOG_RATE", "200")))
_QUEUE = max(1, int(os.environ.get("DPDB_LOG_QUEUE", "1000")))
_BATCH = 500            # messages a `log_lines` carries at most (well under a frame)
_GATHER_SECONDS = 0.05  # the sender lets a batch gather this long after it is woken
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

# The tokens, the drops and whether a thread is making a message live in the agent
# (src/agent/log_budget.hpp), where the engine reads them too: while no token is left, it drops a
# due message itself, without calling into Python. Touched with the GIL held, so without a lock.
_agent.log_budget_rate(_RATE)
_lock = threading.Lock()    # the sender's pid
_send_lock = threading.Lock()  # one sender at a time: the thread, or the exit's flush
_queue = collections.deque()
_wake = threading.Event()
_sender_pid = None
os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release,
                    after_in_child=_lock.release)


def _after_fork_in_child():
    # The parent's queue and drops were (or will be) sent by the parent; the sender thread is not
    # here, and it may have been sending (the send lock is not held across fork: a send may take
    # long).
    global _sender_pid, _send_lock
    _queue.clear()
    _agent.log_take_drops()
    _sender_pid = None
    _send_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def emit(bp, frame, note=""):
    # A field whose code reaches a logpoint makes no second message.
    if _agent.log_making():
        return
    now = time.time()
    if not _agent.log_admit(len(_queue) < _QUEUE):
        if not _wake.is_set():
            _wake.set()
        return
    _agent.log_set_making(True)
    try:
        text = note + bp.dpdb_log.render(frame)
    finally:
        _agent.log_set_making(False)
    if len(text) > _TEXT_LIMIT:
        text = text[:_TEXT_LIMIT] + "…"
    thread = threading.current_thread()
    line = {
        "time": now,
        # What the wire carries must be UTF-8: a lone surrogate becomes its escape.
        "text": text.encode("utf-8", "backslashreplace").decode("utf-8"),
        "thread": thread.name,
        "tid": threading.get_native_id() if hasattr(threading, "get_native_id") else thread.ident,
    }
    hub_id = getattr(bp, "dpdb_global", None)
    if hub_id is not None:
        line["bp"] = hub_id  # the number `dpdb break --list` shows
    _queue.append(line)
    _ensure_sender()
    if not _wake.is_set():
        _wake.set()


def _ensure_sender():
    global _sender_pid
    if _sender_pid == os.getpid():
        return
    with _lock:
        if _sender_pid == os.getpid():
            return
        _sender_pid = os.getpid()
    thread = threading.Thread(target=_send_forever, name="dpdb-logs", daemon=True)
    _agent.start_own_thread(thread, "logs")


def _take_batch():
    """Up to _BATCH queued messages, and a line for the drops since the last batch."""
    batch = []
    while _queue and len(batch) < _BATCH:
        batch.append(_queue.popleft())
    dropped, when = _agent.log_take_drops()
    if dropped:
        batch.append({"time": when, "thread": "dpdb", "tid": 0, "dropped": dropped,
                      "text": "… %d message%s dropped" % (dropped, "" if dropped == 1 else "s")})
    return batch


def _send(batch):
    _agent.send_process("log_lines", json.dumps({"lines": batch}))


def _send_forever():
    me = os.getpid()
    while _sender_pid == me:
        _wake.wait()
        time.sleep(_GATHER_SECONDS)
        _wake.clear()
        # Kept while the hub is away (bounded by the queue): it takes them when it is back.
        while not _agent.connected():
            _agent.wait_connected(1.0)
        with _send_lock:
            while True:
                batch = _take_batch()
                if not batch:
                    break
                try:
                    _send(batch)
                except Exception as error:  # the program must never pay for a bug here
                    sys.stderr.write("dpdb: logpoint messages lost: %r\n" % (error,))


def flush():
    """At the end of the process: what is queued goes now, within _EXIT_WAIT."""
    # The lock first: a batch the sender thread took is still being sent under it, and the
    # queue looks empty meanwhile (a pool worker ended by SIGTERM lost that batch).
    if not _send_lock.acquire(timeout=_EXIT_WAIT):
        return
    try:
        if not _queue and not _agent.log_drops_pending():
            return
        if not _agent.connected() and not _agent.wait_connected(_CONNECT_WAIT_AT_END):
            return
        while True:
            batch = _take_batch()
            if not batch:
                break
            _send(batch)
    except Exception:
        pass  # exiting: nothing may escape
    finally:
        _send_lock.release()


atexit.register(flush)

# Signals whose default action ends the process without Python's exit, and the queue with it.
_ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def flush_at_ending_signals():
    """From the main thread, at start-up: an ending signal that the program leaves at its default
    action sends what is queued first. A handler the program sets later replaces this one."""
    for number in _ENDING_SIGNALS:
        if signal.getsignal(number) == signal.SIG_DFL:
            signal.signal(number, _flush_then_end)


def _flush_then_end(number, frame):
    flush()
    signal.signal(number, signal.SIG_DFL)
    signal.raise_signal(number)
