"""Start-up in a process that `dpdb attach -p` loaded the agent into while it ran: what
`dpdb run` would have put in its environment, and the link to the hub.

Runs once, in a thread the loader started (never in one of the program's), holding the GIL."""

import os

from dpdb import _bootstrap, _command_source, _process

# How long the attach waits for the first connection before it says the hub is unreachable.
_CONNECT_WAIT = 5.0


def start(order):
    """Links this process to the hub of `order` (the attach's request); returns the reply."""
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
    if not _process.ensure_link(wait=_CONNECT_WAIT):
        return {"error": "the agent could not reach the hub at %s within %gs"
                % (order["hub"], _CONNECT_WAIT)}
    _bootstrap.report_os_exit()
    _command_source.register()
    return {"ok": True, "pid": os.getpid()}
