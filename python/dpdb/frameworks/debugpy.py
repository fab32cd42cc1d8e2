"""debugpy beside dpdb: breakpoint() reaches dpdb while no IDE is connected to debugpy.

Importing debugpy's server (ipykernel does so in every Jupyter kernel, to offer its debugger)
makes `sys.breakpointhook` debugpy's own, which ignores PYTHONBREAKPOINT and returns at once
while no IDE is connected: under `dpdb run` a cell's breakpoint() did nothing. The moment that
hook is installed it is wrapped: while debugpy has a client, breakpoint() is its; else dpdb's.
Only in a process that carries the agent (this module is loaded by its start-up), and only
while PYTHONBREAKPOINT names dpdb's set_trace (`dpdb run` sets it, a user may change it).
"""

import os
import sys

from dpdb import _on_import

# The module whose body installs debugpy's hook (debugpy.server imports it first).
_HOOK_MODULE = "debugpy._vendored.force_pydevd"
_DPDB_HOOK = "dpdb.set_trace"

# Handed down by the start-up (a leaf imports no stage): dpdb._set_trace_at.
_set_trace_at = None


def keep_breakpoints(set_trace_at):
    """At start-up of a process that carries the agent: wrap debugpy's hook once it appears."""
    global _set_trace_at
    _set_trace_at = set_trace_at
    _on_import.when_imported(_HOOK_MODULE, _wrap_hook)


def _wrap_hook(module):
    theirs = sys.breakpointhook
    if theirs is sys.__breakpointhook__ or getattr(theirs, "_dpdb_wraps", None) is not None:
        return

    def breakpointhook(*args, **kwargs):
        if os.environ.get("PYTHONBREAKPOINT") != _DPDB_HOOK or _client_connected():
            return theirs(*args, **kwargs)
        # breakpoint() calls the hook from C: the frame below is the caller's.
        return _set_trace_at(sys._getframe(1))

    breakpointhook._dpdb_wraps = theirs
    sys.breakpointhook = breakpointhook


def _client_connected():
    debugpy = sys.modules.get("debugpy")
    try:
        return bool(debugpy.is_client_connected())
    except Exception:
        return False  # a debugpy without the call, or one half torn down at exit
