"""Who this process is: what the hub lists it by (pid, host, command line, tags, name), and
telling the hub when that changes. Every other part of the face may ask; it asks none of them."""

import json
import os
import socket
import sys

from dpdb import _agent, frameworks

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


def _kernel_view():
    """(when this process started, in clock ticks after boot; the kernel and pid namespace its
    pid means something in): a hub that sees the same ones can look at this process in /proc
    after its connection closed, and tell an exec or a process still running from one gone."""
    try:
        with open("/proc/self/stat") as f:
            started = f.read().rpartition(")")[2].split()[19]
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        return started, boot + ":" + os.readlink("/proc/self/ns/pid")
    except (OSError, IndexError):
        return None, None


def exec_target():
    """(path, argv) of the program this process is about to become, when it is a child that
    subprocess forked to run one and Python runs in it for a moment (a preexec_fn makes the fork
    run the at-fork hooks): the exec happens in C, where no audit event tells of it."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_execute_child" and code.co_filename.endswith("subprocess.py"):
            found = frame.f_locals
            args = found.get("args")
            if not isinstance(args, (list, tuple)) or not args:
                return None
            # The paths the child will try in turn (PATH searched), as subprocess lists them.
            for path in found.get("executable_list") or [found.get("executable") or args[0]]:
                path = os.fsdecode(path)
                if os.path.isfile(path) and os.access(path, os.X_OK):
                    return os.path.realpath(path), [os.fsdecode(a) for a in args]
            return None
        frame = frame.f_back
    return None


# What the hub accepts of a process's tags (src/wire/contents.hpp): it copies them into every
# logpoint message it keeps. Beyond these, tags are left out rather than the process refused.
_MAX_TAGS = 32
_MAX_TAGS_BYTES = 2048


def tags():
    found = {name: os.environ[name] for name in _TAG_VARIABLES if name in os.environ}
    found.update(frameworks.tags())
    for item in os.environ.get("DPDB_TAGS", "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            found[key.strip()] = value.strip()
    kept, size = {}, 0
    for key, value in found.items():
        size += len(key.encode(errors="replace")) + len(str(value).encode(errors="replace"))
        if len(kept) == _MAX_TAGS or size > _MAX_TAGS_BYTES:
            break
        kept[key] = str(value)
    return kept


def process_name():
    """The name a person knows a process by, where its launcher gives one: pytest-xdist's
    "gw0", multiprocessing's, `multiprocess`'s and billiard's (Celery's) "ForkPoolWorker-1"."""
    xdist = os.environ.get("PYTEST_XDIST_WORKER")
    if xdist:
        return xdist
    for module in ("billiard", "multiprocess", "multiprocessing"):
        loaded = sys.modules.get(module)
        try:
            name = loaded.current_process().name if loaded else ""
        except Exception:
            continue
        if name and name != "MainProcess":
            return name
    return ""


class _NamedAfterFork:
    """The key multiprocessing's after-fork registry holds (weakly, so one lives here)."""


_named_after_fork = _NamedAfterFork()


def refresh_when_launcher_names_child():
    """multiprocessing, `multiprocess` and billiard name a forked child in its bootstrap, after
    os's fork hooks announced it unnamed; their own after-fork registry runs once the name is set,
    so the hub hears it at once rather than at the control thread's next recheck."""
    for module in ("billiard", "multiprocess", "multiprocessing"):
        util = sys.modules.get(module + ".util")
        if util is not None and hasattr(util, "register_after_fork"):
            util.register_after_fork(_named_after_fork, lambda _: refresh())


def describe():
    started, kernel = _kernel_view()
    described = {
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
    if started is not None:
        described.update(started=started, kernel=kernel)
    return described


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
