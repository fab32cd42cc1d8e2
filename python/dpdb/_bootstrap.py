"""Run at start-up of every Python process of a `dpdb run` (from the sitecustomize it writes):
links the process to the hub and, with --post-mortem, catches uncaught exceptions."""

import importlib.machinery
import importlib.util
import os
import sys


def start(sitecustomize_path):
    _chain_sitecustomize(sitecustomize_path)
    from dpdb import _command_source

    _command_source.register()
    if os.environ.get("DPDB_RUN_INTERACTIVE"):
        from dpdb import _ctrl_c

        _ctrl_c.install()  # first: the terminal's Ctrl-C may come while the link starts
    from dpdb import _process

    if _process.hub_configured():
        try:
            _process.ensure_link(wait=0)  # connects in the background
            from dpdb import _control

            # ... but the program waits for the hub's global breakpoints (milliseconds), so
            # that its first lines stop too.
            _control.wait_for_breakpoints()
            from dpdb import _identity, _set_trace_at, frameworks, set_trace

            frameworks.at_start(set_trace, _set_trace_at, _identity.refresh)
        except Exception as error:  # a bad DPDB_HUB must not stop the program
            sys.stderr.write("dpdb: not debugging pid %d: %s\n" % (os.getpid(), error))
            return
    report_os_exit()
    from dpdb import _logpoints

    _logpoints.flush_at_ending_signals()
    if os.environ.get("DPDB_POST_MORTEM"):
        from dpdb import _exceptions

        _exceptions.want_uncaught("post-mortem", _open_post_mortem)


def report_os_exit():
    """os._exit() skips the C exit handlers that tell the hub a process's exit status, and
    multiprocessing's forked children always leave through it."""
    from dpdb import _agent

    real_exit = os._exit

    def _exit(status):
        try:
            # Logpoint messages and copied output still queued go first (multiprocessing's
            # children leave here).
            for name in ("dpdb._logpoints", "dpdb._program_output"):
                queued = sys.modules.get(name)
                if queued is not None:
                    queued.flush()
            # A child forked a moment ago may not have reached the hub yet: a short wait
            # (connecting takes a millisecond) lets its exit status be known.
            if _agent.started():
                _agent.wait_connected(0.5)
            _agent.notify_exit(int(status))
        finally:
            real_exit(status)

    os._exit = _exit


def _chain_sitecustomize(path):
    """Our sitecustomize shadows any other one on sys.path (Debian's, a venv's): run that too."""
    here = os.path.dirname(os.path.abspath(path))
    for entry in sys.path:
        if os.path.abspath(entry or os.curdir) == here:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception as error:
                sys.stderr.write("dpdb: error in %s: %r\n" % (spec.origin, error))
            return


def _open_post_mortem(exc_type, exc_value, traceback, header=None, mode="unhandled"):
    import dpdb

    dpdb._post_mortem_of(traceback, exc_value, header, mode)
