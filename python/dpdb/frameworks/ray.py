"""Ray under dpdb: breakpoint() in a task or an actor reaches dpdb, and a process says which
task, actor, job and node it serves.

Ray points PYTHONBREAKPOINT at its own debugger from inside each worker and driver as it
connects (`ray.util.rpdb.set_trace`, `ray.util.rpdb._driver_set_trace`), which replaces the
`dpdb.set_trace` that `dpdb run` put there, and `sys.breakpointhook` reads that variable at
every breakpoint(). Only in a process that carries the agent (this module is loaded by its
start-up), the moment Ray does so (seen by the agent's watch of the variable) makes dpdb's
set_trace the hook itself, so that breakpoint() stops in the caller's frame; a later change
of the variable to anything else gives Python's own hook back. A process without the agent
never loads this: Ray's debugger works there as it does.
"""

import os
import sys

from dpdb import _agent
from dpdb.frameworks import caught_exceptions

_RAY_TARGETS = ("ray.util.rpdb.",)
# Which node a process runs on: the start of Ray's node id is enough to tell nodes apart.
_NODE_ID_CHARS = 8


# Handed down by the start-up (a leaf imports no stage): dpdb.set_trace.
_set_trace = None


def keep_breakpoints(set_trace):
    """At start-up of a process that carries the agent: watch PYTHONBREAKPOINT for Ray."""
    global _set_trace
    if os.environ.get("DPDB_RAY", "on") == "off":
        return
    _set_trace = set_trace
    _agent.watch_breakpoint_variable(_breakpoint_variable_changed)
    _breakpoint_variable_changed(os.environ.get("PYTHONBREAKPOINT"))


def _breakpoint_variable_changed(value):
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if value and value.startswith(_RAY_TARGETS):
        if sys.breakpointhook is sys.__breakpointhook__:
            sys.breakpointhook = _set_trace
        _take_post_mortem()
    elif sys.breakpointhook is _set_trace:
        sys.breakpointhook = sys.__breakpointhook__


def _take_post_mortem():
    """A task's exception is caught by Ray's worker, which turns it into a RayTaskError for the
    caller; while it still handles it, the worker asks `ray.util.pdb` whether to open Ray's
    post-mortem debugger (RAY_DEBUG_POST_MORTEM) and opens it. While dpdb wants the exceptions
    frameworks catch (`dpdb run --post-mortem`, the hub's "uncaught exceptions" breakpoint)
    those two answer for dpdb: the session opens in the worker, in the task's frames; else
    Ray's own answer."""
    rpdb = sys.modules.get("ray.util.rpdb")
    if rpdb is None or getattr(rpdb, "_dpdb_post_mortem", False):
        return
    enabled, post_mortem = rpdb._is_ray_debugger_post_mortem_enabled, rpdb._post_mortem
    wanted = caught_exceptions.wanted
    rpdb._is_ray_debugger_post_mortem_enabled = lambda: wanted() or enabled()
    rpdb._post_mortem = lambda: _post_mortem_of_task() if wanted() else post_mortem()
    rpdb._dpdb_post_mortem = True


def _post_mortem_of_task():
    exc_type, exception, traceback = sys.exc_info()
    if exc_type is None:
        return
    caught_exceptions.post_mortem(
        exception, traceback, "ray: post-mortem of %s in %s (the caller gets a RayTaskError once "
        "you continue)" % (exc_type.__name__, task_name() or "a Ray task"))


def _context():
    ray = sys.modules.get("ray")
    try:
        return ray.get_runtime_context() if ray is not None and ray.is_initialized() else None
    except Exception:
        return None  # a Ray that is starting or stopping, or another module named ray


def tags():
    """The job and the node of a Ray driver or worker."""
    context = _context()
    if context is None:
        return {}
    found = {}
    try:
        found["ray_job"] = context.get_job_id()
        found["ray_node"] = context.get_node_id()[:_NODE_ID_CHARS]
    except Exception:
        pass
    return found


def task_name():
    """The task or actor method the calling thread runs ("Counter.incr", "square"), with its
    actor's name if it has one; empty outside a Ray task."""
    context = _context()
    if context is None:
        return ""
    try:
        task = context.get_task_name() or ""
        actor = context.get_actor_name() if context.get_actor_id() else None
    except Exception:
        return ""
    if not task:
        return ""
    return "ray %s %s%s" % ("actor" if actor is not None else "task", task,
                            " (%s)" % actor if actor else "")
