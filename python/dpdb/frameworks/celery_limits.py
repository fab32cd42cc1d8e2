"""Celery's time limits, held while the task's worker is paused.

Celery's prefork pool enforces a task's time limits in the pool's parent: billiard's
TimeoutHandler sends the worker SIGUSR1 at the soft limit and SIGTERM, then SIGKILL, at the hard
one. Nothing the worker does can stop a SIGKILL, so the parent, which runs dpdb's agent too, is
taught to wait: a limit that comes due while the task's worker is paused (it runs the thread
`dpdb-paused`, see supervisors) is not acted on; the worker is looked at again every second
or less, and once it runs again the task's clock starts again, in full.

Who calls the handler differs. With a broker that has no event loop of its own (kombu's
filesystem and memory transports), billiard's timeout thread checks every task's start time
once a second, and looks again by itself once the start time is moved; a soft limit it fires
only once per task, so one that came due during the pause is dropped. With an event loop (Redis,
RabbitMQ), Celery's AsynPool schedules one timer per limit on it, and the look again is a timer
there; when the worker runs again, the pool's own scheduling starts both limits again.

The handler's methods are bound when a pool is made, so they are wrapped in the class as
billiard's pool module is imported, before any pool exists.
"""

import os
import sys
import time

from dpdb import _on_import

_MODULE = "billiard.pool"
# How often, on Celery's event loop, a limit that came due during a pause looks at the worker
# again (billiard's timeout thread looks every second).
RECHECK_SECONDS = 0.5
_PAUSED_THREAD = b"dpdb-paused\n"


def in_pool_child():
    """Whether this process is a worker of Celery's prefork pool."""
    process = sys.modules.get("billiard.process")
    return "celery" in sys.modules and process is not None and (
        process.current_process().name != "MainProcess")


def paused(pid):
    """Whether process `pid` is paused in dpdb: it runs the thread named dpdb-paused."""
    try:
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/comm" % (pid, task), "rb") as comm:
                if comm.read() == _PAUSED_THREAD:
                    return True
    except OSError:
        pass  # gone, or a thread that ended as we looked
    return False


def hold_limits_when_imported():
    """Wraps the timeout handler as soon as billiard's pool is imported (or now, if it is)."""
    _on_import.when_imported(_MODULE, _hold_limits)


def _hold_limits(pool):
    handler = getattr(pool, "TimeoutHandler", None)
    if handler is None or getattr(handler, "_dpdb_holds_limits", False):
        return
    handler.on_soft_timeout = _unless_paused(handler.on_soft_timeout)
    handler.on_hard_timeout = _unless_paused(handler.on_hard_timeout)
    handler._dpdb_holds_limits = True


def _unless_paused(on_timeout):
    def on_timeout_unless_paused(handler, job):
        held = getattr(job, "_dpdb_held", False)
        if job._worker_pid and paused(job._worker_pid):
            if job._on_timeout_set is None:
                _look_at_next_tick(handler, job)
            elif not held:
                _look_again_soon(job)
            job._dpdb_held = True
        elif not held:
            on_timeout(handler, job)
        elif job._on_timeout_set is None:
            # Billiard's timeout thread found the worker running again: the clock starts anew.
            job._dpdb_held = False
            job._time_accepted = time.monotonic()
        # (On an event loop a timer left from before the pause finds it running: the look
        # again, due within RECHECK_SECONDS, starts the limits again.)

    return on_timeout_unless_paused


def _look_at_next_tick(handler, job):
    """Billiard's timeout thread reads each task's start time every second: moved so that the
    hard limit is due again at once, it looks again by itself."""
    hard = job._timeout or handler.t_hard
    if hard:
        job._time_accepted = time.monotonic() - hard


def _look_again_soon(job):
    """On Celery's event loop, a timer of our own, until the worker runs again; then the task's
    limits start again, in full, scheduled by the pool itself (timers left from before are
    cancelled first)."""
    from kombu.asynchronous import get_event_loop

    def again():
        if job.ready():
            return
        if paused(job._worker_pid):
            get_event_loop().call_later(RECHECK_SECONDS, again)
            return
        job._dpdb_held = False
        job._on_timeout_cancel(job)
        job._on_timeout_set(job, job._soft_timeout, job._timeout)

    get_event_loop().call_later(RECHECK_SECONDS, again)
