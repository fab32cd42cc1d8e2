"""Supervisors that kill a worker they believe hung.

Servers and task queues watch their workers: gunicorn's arbiter kills a worker whose heartbeat is
older than its --timeout, Celery's pool kills a task that outruns its time limit, Dask's scheduler
restarts a worker whose heartbeat stopped (dask_worker); torch.distributed.breakpoint() leaves
every process group's timeout raised (torch_distributed). A worker paused
at a prompt looks hung to them, and was killed under the user, with the session and the request
or task it held. While any thread of a process is paused, each strategy here that applies keeps
the supervisor content, and says so in one line at the prompt; once no thread is paused, the
supervisor's timeouts apply again.

While the process is paused, a thread named `dpdb-paused` runs: it beats the heartbeats, and its
name tells a supervisor in another process (itself under dpdb) that this worker is paused rather
than hung.

DPDB_SUPERVISORS switches them: unset or `on` (all), `off` (none), or names to leave out, e.g.
`-gunicorn,-celery,-dask,-torch`.
"""

import contextlib
import gc
import os
import sys
import threading
import weakref

from dpdb import _agent, _switches
from dpdb.frameworks import celery_limits, dask_worker, torch_distributed

# The name of the thread that runs while a thread of the process is paused (see above).
PAUSED_THREAD = "dpdb-paused"


class Gunicorn:
    """gunicorn's arbiter kills a worker whose heartbeat (the mtime of its WorkerTmp file, set by
    Worker.notify) is older than --timeout; every worker class beats it from its main loop,
    which a pause stops (the sync worker's, or the event loop of uvicorn's and gunicorn's ASGI
    workers). While paused, the heartbeat is beaten for it, four times per --timeout."""

    name = "gunicorn"
    _found = (None, None)  # (pid, its Worker or None): looked for once per process

    def __init__(self):
        self._worker = None

    def applies(self):
        pid, worker = Gunicorn._found
        if pid != os.getpid():
            worker = self._running_worker()
            Gunicorn._found = os.getpid(), worker
        self._worker = worker
        return worker is not None and bool(worker.timeout)

    @staticmethod
    def _running_worker():
        """This process's Worker, found on the heap: no hook needs to be in place before
        gunicorn starts, and any worker class is found. In a worker, the arbiter's records of
        its siblings (inherited at fork) are Workers too; only its own has this pid."""
        base = sys.modules.get("gunicorn.workers.base")
        if base is None:
            return None
        pid = os.getpid()
        for candidate in gc.get_objects():
            if isinstance(candidate, base.Worker) and candidate.pid == pid:
                return candidate
        return None

    def interval(self):
        # The worker's timeout is half the arbiter's; a beat every half of that leaves margin.
        return self._worker.timeout / 2.0

    def describe(self):
        return ("gunicorn: keeping the worker's heartbeat while it is paused (its --timeout "
                "of %gs counts again once it runs)" % (self._worker.timeout * 2))

    def beat(self):
        self._worker.notify()

    def resume(self):
        # The time it stood paused is not held against it: its timeout starts afresh.
        self._worker.notify()


class Celery:
    """Celery's pool parent kills a task that outruns its hard time limit, and signals it at
    its soft one; the child cannot stop either. The parent (also under dpdb) puts off a limit
    that comes due while its child is paused (celery_limits); here the child only says so."""

    name = "celery"

    def applies(self):
        return celery_limits.in_pool_child()

    def interval(self):
        return 1.0

    def describe(self):
        return ("celery: the pool holds this task's time limits while it is paused (they start "
                "again, in full, once it runs)")

    @staticmethod
    def prepare():
        celery_limits.hold_limits_when_imported()

    def beat(self):
        pass

    def resume(self):
        pass


STRATEGIES = (Gunicorn, Celery, dask_worker.Dask, torch_distributed.Torch)


def enabled():
    """The strategies DPDB_SUPERVISORS leaves on."""
    return _switches.enabled("DPDB_SUPERVISORS", STRATEGIES)


class _Keeper:
    """The strategies that apply while the process is paused, and the thread that beats them."""

    def __init__(self, strategies):
        self.strategies = strategies
        self.stop = threading.Event()
        thread = threading.Thread(target=self.run, name=PAUSED_THREAD, daemon=True)
        _agent.start_own_thread(thread, "paused")

    def run(self):
        interval = min(strategy.interval() for strategy in self.strategies)
        while not self.stop.wait(interval):
            self.each("beat")

    def end(self):
        self.stop.set()
        self.each("resume")

    def each(self, method):
        for strategy in self.strategies:
            try:
                getattr(strategy, method)()
            except Exception as error:  # the program must never pay for a bug here
                _switches.warn_once("%s strategy: %r" % (strategy.name, error))


_lock = threading.Lock()
_paused_threads = 0
_keeper = None
_told = weakref.WeakKeyDictionary()  # console -> the session it told what the strategies do


@contextlib.contextmanager
def kept_while_paused(debugger):
    """Around a pause of the calling thread: the supervisors' strategies are on while any thread
    of the process is paused; the debugger's session is told once what they do."""
    keeper = _begin()
    if keeper is not None:
        _tell(debugger, keeper)
    try:
        yield
    finally:
        _end()


def _begin():
    global _paused_threads, _keeper
    with _lock:
        _paused_threads += 1
        if _paused_threads == 1:
            applying = [strategy() for strategy in enabled()]
            applying = [strategy for strategy in applying if _applies(strategy)]
            _keeper = _Keeper(applying) if applying else None
        return _keeper


def _applies(strategy):
    try:
        return strategy.applies()
    except Exception as error:  # a framework version we do not know: leave it alone
        _switches.warn_once("%s strategy: %r" % (strategy.name, error))
        return False


def _end():
    global _paused_threads, _keeper
    with _lock:
        _paused_threads -= 1
        if _paused_threads == 0 and _keeper is not None:
            _keeper.end()
            _keeper = None


def _tell(debugger, keeper):
    # Once per session: a step (`n`) ends the pause and starts another in the same session.
    console = debugger.console
    if _told.get(console) == console.sid:
        return
    _told[console] = console.sid
    for strategy in keeper.strategies:
        debugger.message(strategy.describe())


def _prepare_supervisors():
    """The supervisor's own side of the strategies that have one (Celery's pool parent holds the
    limits of a paused worker), set up when dpdb starts in a process: before the program runs."""
    for strategy in enabled():
        if hasattr(strategy, "prepare"):
            strategy.prepare()


_prepare_supervisors()
