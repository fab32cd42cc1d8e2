"""Start-up in a process that `dpdb attach -p` loaded the agent into while it ran: what
`dpdb run` would have put in its environment, and the link to the hub.

Runs once, in a thread the loader started (never in one of the program's), holding the GIL."""

import os

from dpdb import _bootstrap, _command_source, _control, _process

# How long the attach waits for the first connection before it says the hub is unreachable.
_CONNECT_WAIT = 5.0
# What the start-up sets in the process's environment.
_SET = ("DPDB_HUB", "DPDB_AGENT_KEY", "DPDB_TOKEN", "DPDB_TOKEN_FILE", "PYTHONBREAKPOINT",
        "PYTHONPATH")


def start(order):
    """Links this process to the hub of `order` (the attach's request); returns the reply. A
    start-up that fails leaves the process as it found it: its environment, and no thread of
    dpdb's."""
    environment = {name: os.environ.get(name) for name in _SET}
    try:
        if _link(order):
            _bootstrap.report_os_exit()
            _command_source.register()
            return {"ok": True, "pid": os.getpid()}
        error = "the agent could not reach the hub at %s within %gs" % (order["hub"],
                                                                         _CONNECT_WAIT)
    except BaseException:
        _undo(environment)
        raise
    _undo(environment)
    return {"error": error}


def _link(order):
    os.environ["DPDB_HUB"] = order["hub"]
    os.environ["DPDB_AGENT_KEY"] = order["key"]
    for name in ("DPDB_TOKEN", "DPDB_TOKEN_FILE"):
        os.environ.pop(name, None)
    # breakpoint() reads it at every call, unless the program set its own hook.
    os.environ["PYTHONBREAKPOINT"] = "dpdb.set_trace"
    if order.get("site"):
        # --tree: Python processes started from now on load the agent at their start-up.
        old = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = order["site"] + (os.pathsep + old if old else "")
    return _process.ensure_link(wait=_CONNECT_WAIT)


def _undo(environment):
    _control.stop()
    for name, value in environment.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
