"""Who this process is: what the hub lists it by (pid, host, command line, tags, name), and
telling the hub when that changes. Every other part of the face may ask; it asks none of them."""

import json
import os
import socket
import sys

from dpdb import _agent

# Environment variables whose values identify a process of a distributed job.
_TAG_VARIABLES = (
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "NODE_RANK", "GROUP_RANK",
    "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
)


def _argv():
    orig = getattr(sys, "orig_argv", None)  # 3.10+
    if orig:
        return list(orig)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return [sys.executable] + list(sys.argv)


def tags():
    found = {name: os.environ[name] for name in _TAG_VARIABLES if name in os.environ}
    for item in os.environ.get("DPDB_TAGS", "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            found[key.strip()] = value.strip()
    return found


def process_name():
    """The name a person knows a process by, where its launcher gives one: pytest-xdist's
    "gw0", multiprocessing's and billiard's (Celery's) "ForkPoolWorker-1"."""
    xdist = os.environ.get("PYTEST_XDIST_WORKER")
    if xdist:
        return xdist
    for module in ("billiard", "multiprocessing"):
        loaded = sys.modules.get(module)
        try:
            name = loaded.current_process().name if loaded else ""
        except Exception:
            continue
        if name and name != "MainProcess":
            return name
    return ""


def describe():
    return {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "host": socket.gethostname(),
        "argv": _argv(),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "cwd": os.getcwd(),
        "tags": tags(),
        "process_name": process_name(),
        "run": os.environ.get("DPDB_RUN_ID", ""),
    }


# What the hub was last told (tags, name), by whichever thread told it.
_announced = None


def announce():
    """The description to give the hub when the link starts, remembered for refresh()."""
    global _announced
    _announced = (tags(), process_name())
    return json.dumps(describe())


def refresh():
    """Tell the hub if this process's tags or name changed since it said who it is: launchers
    often set RANK, PYTEST_XDIST_WORKER or a worker's name after start-up."""
    global _announced
    current = (tags(), process_name())
    if current != _announced and _agent.started():
        _announced = current
        _agent.update_process(json.dumps(describe()))
