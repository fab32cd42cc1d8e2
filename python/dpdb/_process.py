"""The process's link to the hub: started on demand (or at start-up), kept across fork(), and
the control thread started with it. The first stop of a process's start after start-up."""

import functools
import os
import sys
import threading
import warnings

from dpdb import _agent, _control, _identity

# How long a process waits for its first connection before it says the hub is unreachable.
_CONNECT_WAIT = 2.0


def hub_configured():
    return bool(os.environ.get("DPDB_HUB"))


def _secret_source():
    """(secret, file): the agent key `dpdb run` gives its processes (DPDB_AGENT_KEY: it proves
    the role of a debugged process and nothing more), DPDB_TOKEN itself, or the file that holds
    the hub's secret — DPDB_TOKEN_FILE, or, as the dpdb client finds it, the token file a hub
    keeps beside its Unix socket (so that `export DPDB_HUB=unix:...` is enough). The agent reads
    the file at every attempt to connect, and only if this user owns it and nobody else may read
    it."""
    secret = os.environ.get("DPDB_AGENT_KEY", "") or os.environ.get("DPDB_TOKEN", "")
    if secret:
        return secret, ""
    path = os.environ.get("DPDB_TOKEN_FILE", "")
    if not path:
        address = os.environ["DPDB_HUB"]
        socket_path = address[len("unix:"):] if address.startswith("unix:") else address
        if socket_path.startswith("/"):
            path = socket_path + ".token"
    return "", path


_start_lock = threading.Lock()
# Held across fork(), so that a child never inherits it locked by a thread it does not have.
os.register_at_fork(before=_start_lock.acquire, after_in_parent=_start_lock.release,
                    after_in_child=_start_lock.release)


def _unreachable_socket():
    """Why this process cannot reach a hub on a Unix socket, if it cannot: a process that
    changed its user (a server dropping privileges) is kept out by the socket's permissions,
    which let in only the user who started the hub."""
    address = os.environ["DPDB_HUB"]
    if not address.startswith("unix:"):
        return None
    path = address[len("unix:"):]
    try:
        owner = "it belongs to uid %d" % os.stat(path).st_uid
    except FileNotFoundError:
        return None  # no hub there yet: the agent waits for one
    except OSError as error:
        owner = error.strerror or str(error)
    if os.access(path, os.R_OK | os.W_OK):
        return None
    return ("dpdb: not debugging this process (pid %d, uid %d): the hub at %s is not open to "
            "it (%s); debug it as that user, or run the job as the user it switches to\n"
            % (os.getpid(), os.getuid(), address, owner))


_told_unreachable = False


def _withdraw_exec():
    try:
        if _agent.started():
            # Bounded: a hub that stopped reading must not hold the program's error.
            _agent.send_process("exec_failed", "{}", 1.0)
    except Exception:  # the program's own error is the one to see
        pass


def _watch_failed_exec():
    """The hub hears of an exec before it happens (agent/exec_watch); one that fails (no such
    file, not executable) is withdrawn, or the process would be taken for exec'd when it ends.
    Every os.exec* goes through os.execv or os.execve (os.execvp tries each PATH entry in turn)."""
    for name in ("execv", "execve"):
        real = getattr(os, name)
        if getattr(real, "_dpdb_exec", False):
            continue

        def exec_or_withdraw(*args, _real=real, **kwargs):
            try:
                return _real(*args, **kwargs)
            except BaseException:
                _withdraw_exec()
                raise

        exec_or_withdraw._dpdb_exec = True
        functools.update_wrapper(exec_or_withdraw, real)
        setattr(os, name, exec_or_withdraw)


def ensure_link(wait=_CONNECT_WAIT):
    """Starts the link to the hub if DPDB_HUB says where it is; returns whether it is connected."""
    if not hub_configured():
        return False
    if _agent.forked_without_hooks():
        _after_fork_in_child()
    with _start_lock:
        started = _agent.started()
        if not started and not _tell_if_unreachable():
            secret, secret_file = _secret_source()
            connected = _agent.start(os.environ["DPDB_HUB"], secret, secret_file,
                                     _identity.announce(), wait)
            _agent.watch_exec()
            _watch_failed_exec()
            _control.start()
            return connected
    if not started:
        return False
    # A worker forked and then switched to another user keeps the connection made at the fork;
    # one that lost it cannot make another, and is told why.
    if _agent.wait_connected(wait):
        return True
    _tell_if_unreachable()
    return False


def _tell_if_unreachable():
    """Whether the hub's socket shuts this process out (said once on stderr)."""
    global _told_unreachable
    why = _unreachable_socket()
    if why and not _told_unreachable:
        _told_unreachable = True
        sys.stderr.write(why)
    return why is not None


# CPython 3.12+ warns, after fork() or forkpty(), when the process has more than one thread, by
# counting every thread of the process: the agent's own would make every program that forks warn.
# Before each fork we decide whether the program has a thread of its own; if not, a filter for
# this process's warning stays until the next fork decides again (3.13 warns after the
# after_in_parent hooks ran, so it cannot go then).
_FORK_WARNING = r"This process \(pid=%d\) is multi-threaded, use of (fork|forkpty)\(\)"
_our_fork_warning_filter = None


def _only_our_threads_besides(tid):
    """Whether every thread of this process but `tid` is one of the agent's (named dpdb-*)."""
    try:
        for task in os.listdir("/proc/self/task"):
            if int(task) != tid:
                with open("/proc/self/task/%s/comm" % task) as comm:
                    if not comm.read().startswith("dpdb-"):
                        return False
    except (OSError, ValueError):
        return False  # a thread that ended as we looked, or no /proc: CPython decides
    return True


def _drop_fork_warning_filter():
    global _our_fork_warning_filter
    if _our_fork_warning_filter is not None:
        try:
            warnings.filters.remove(_our_fork_warning_filter)
        except ValueError:
            pass  # the program reset its filters since
        _our_fork_warning_filter = None


def _decide_fork_warning():
    global _our_fork_warning_filter
    _drop_fork_warning_filter()
    if sys.version_info >= (3, 12) and _agent.started() and _only_our_threads_besides(
            threading.get_native_id()):
        warnings.filterwarnings("ignore", _FORK_WARNING % os.getpid(), DeprecationWarning)
        _our_fork_warning_filter = warnings.filters[0]


os.register_at_fork(before=_decide_fork_warning)


# Also called by ensure_link in a child forked without Python's fork hooks (a server forking its
# workers in C: uWSGI without them, a program embedding CPython), the first time it needs the hub:
# the link let go of the parent's connection at the fork itself (agent/link).
def _after_fork_in_child():
    _drop_fork_warning_filter()
    # The thread that forked lives on in the child as another OS thread; 3.12's threading keeps
    # the parent's id for it.
    current = threading.current_thread()
    if hasattr(current, "_set_native_id"):
        current._set_native_id()
    if _agent.started():
        _agent.after_fork_in_child(_identity.announce())
        _identity.refresh_when_launcher_names_child()
        _control.start()
        target = _identity.exec_target()
        if target is not None:
            _agent.announce_exec(*target)


os.register_at_fork(after_in_child=_after_fork_in_child)
