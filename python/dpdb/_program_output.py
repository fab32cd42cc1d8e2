"""What the program writes to sys.stdout and sys.stderr, copied to the hub while a client watches
it (an IDE: docs/ide.md, "Program output"). The hub says when (`copy_output {on}`, to the
control thread); the streams are wrapped at the first such order and write on as before, so the
program's terminal, pipe or file gets the same text whether anyone watches or not. What the
program wrote through a stream it took before the wrap (a logging handler made earlier) is not
copied, nor what bypasses sys.stdout (os.write, C code, child programs)."""

import atexit
import os
import sys

from dpdb import _agent

_PIECE = 16 * 1024  # characters one message carries at most: well within a frame once escaped
# A forked child's first write waits this long, once, for its own link to the hub: its parent's
# connection is not its own, and a worker's first line comes right after the fork.
_FORKED_CONNECT_WAIT = 1.0

# At exit: how long what the program printed last may hold it, on its way to the hub.
_EXIT_WAIT = 1.0

_copying = False
_connected_in = os.getpid()  # the process whose link was waited for (a fork's child waits again)


class _CopiedStream:
    """A text stream that writes to the one it wraps, and to the hub while copying is on."""

    def __init__(self, stream, name):
        self._dpdb_stream = stream
        self._dpdb_name = name

    def write(self, text):
        written = self._dpdb_stream.write(text)
        if _copying and isinstance(text, str) and text:
            _send(self._dpdb_name, text)
        return written

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._dpdb_stream, name)


def notice(text):
    """dpdb's own words on the program's stderr: never copied as the program's output."""
    stream = sys.stderr
    if isinstance(stream, _CopiedStream):
        stream = stream._dpdb_stream
    if stream is not None:
        stream.write(text)
        stream.flush()


def copy(on):
    """From the control thread, as the hub says: start or stop copying (stdout and stderr)."""
    global _copying
    if on:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if stream is not None and not isinstance(stream, _CopiedStream):
                setattr(sys, name, _CopiedStream(stream, name))
    _copying = on


def _send(name, text):
    global _connected_in
    if _connected_in != os.getpid():
        _connected_in = os.getpid()
        _agent.wait_connected(_FORKED_CONNECT_WAIT)
    # What the wire carries must be UTF-8: a lone surrogate becomes its escape.
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    # Handed to the agent's outbox, not sent: a hub that stopped reading must not hold the
    # program's print().
    for start in range(0, len(text), _PIECE):
        _agent.post_output(name, text[start:start + _PIECE])


def flush():
    """At the end of the process: what was copied and not sent yet goes, within _EXIT_WAIT."""
    if _copying:
        try:
            _agent.outbox_drain(_EXIT_WAIT)
        except Exception:
            pass  # exiting: nothing may escape


atexit.register(flush)
