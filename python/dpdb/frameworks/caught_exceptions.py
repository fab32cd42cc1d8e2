"""`dpdb run --post-mortem` where a framework catches the exception itself.

A Flask or Django view that raises becomes a 500, a Celery task that raises is stored as
FAILURE, a test that fails is a report of pytest's, a task that raises in a joblib/loky worker
is sent back to its caller, and so is one raised in a worker of a process pool (the standard
library's multiprocessing.Pool and concurrent.futures.ProcessPoolExecutor, its fork
`multiprocess` that Hugging Face datasets uses, Celery's billiard): none of these exceptions
is uncaught, so the process's excepthook never sees them. Each strategy here hooks the
framework's own place for its exception, in the process and the thread where it was raised, and
opens a post-mortem session on its traceback there (the frames, with their locals, as
pdb.post_mortem shows them). The framework goes on with its own handling once the session is
continued. The session's first line says which strategy opened it and what the framework does
next.

Who wants these sessions is _exceptions' business: `dpdb run --post-mortem`, and the hub's
"uncaught exceptions" breakpoint (for a server, an exception its framework catches is the
uncaught one; debugpy's "userUnhandled" is the analogue).

Ray's tasks are ray's (Ray asks its own debugger, which dpdb answers for, through post_mortem
here); DPDB_RAY=off switches it.
DPDB_POST_MORTEM_HOOKS switches the strategies (see _switches), e.g. `-pytest,-loky`.
"""

import sys

from dpdb import _on_import, _switches

# Handed down by _exceptions while anybody wants uncaught exceptions (a leaf imports no stage):
# opens a post-mortem session on an exception's traceback, with a first line for the user.
_open = None
_installed = False
# Set on an exception a session was opened for: one that is raised again (a framework that
# propagates it, a caller in the same process) opens no second session.
_SEEN = "_dpdb_post_mortem_seen"


def post_mortem(exception, traceback, header):
    """A session on `traceback` (of `exception`), unless one was opened for that exception."""
    if _open is None or traceback is None or getattr(exception, _SEEN, False):
        return
    try:
        setattr(exception, _SEEN, True)
    except Exception:
        pass  # an exception that takes no attributes: it may be seen twice, no more
    _open(exception, traceback, header)


def sent_away(exception):
    """The exception leaves this process, pickled, to a caller that sees it afresh (and may open
    a session of its own where it raises it again): the mark stays here."""
    try:
        delattr(exception, _SEEN)
    except AttributeError:
        pass


def wanted():
    """Whether a session would open for a framework's exception now."""
    return _open is not None


def seen(exception):
    """Whether a session was opened for this exception already."""
    return getattr(exception, _SEEN, False)


class Flask:
    """Flask answers a view's exception with a 500 in Flask.handle_exception, which first sends
    the got_request_exception signal, in the thread that served the request."""

    name = "flask"
    modules = ("flask.signals",)

    def hook(self, signals):
        signals.got_request_exception.connect(self.on_exception, weak=False)

    @staticmethod
    def on_exception(sender, exception=None, **extra):
        where = "a request"
        try:
            import flask

            where = "%s %s" % (flask.request.method, flask.request.path)
        except Exception:
            pass  # no request context (a signal sent by hand): the exception is enough
        post_mortem(exception, getattr(exception, "__traceback__", None),
                    "flask: post-mortem of %s in %s (Flask answers it with a 500 once you "
                    "continue)" % (type(exception).__name__, where))


class Django:
    """Django answers a view's exception with a 500 (response_for_exception), which first sends
    the got_request_exception signal, while the exception is handled, in the thread that served
    the request."""

    name = "django"
    modules = ("django.core.signals",)

    def hook(self, signals):
        signals.got_request_exception.connect(self.on_exception, weak=False,
                                              dispatch_uid="dpdb post-mortem")

    @staticmethod
    def on_exception(sender=None, request=None, **extra):
        _, exception, traceback = sys.exc_info()
        post_mortem(exception, traceback,
                    "django: post-mortem of %s in %s %s (Django answers it with a 500 once you "
                    "continue)" % (type(exception).__name__, getattr(request, "method", "?"),
                                   getattr(request, "path", "?")))


class Celery:
    """Celery's worker stores a task's exception as FAILURE and then sends the task_failure
    signal, in the pool's worker process that ran the task."""

    name = "celery"
    modules = ("celery.signals",)

    def hook(self, signals):
        signals.task_failure.connect(self.on_failure, weak=False)

    @staticmethod
    def on_failure(sender=None, task_id=None, exception=None, traceback=None, **extra):
        post_mortem(exception, traceback,
                    "celery: post-mortem of %s in task %s[%s] (the worker logs the failure and "
                    "takes its next task once you continue)" % (type(exception).__name__,
                                                    getattr(sender, "name", "?"), task_id))


class Pytest:
    """pytest reports a failing test itself; its pytest_exception_interact hook is where --pdb
    opens pdb. dpdb's plugin (pytest_plugin) implements that hook, and goes into this
    process's pytest as one of its default plugins, which get_config() imports by name: not
    through PYTEST_PLUGINS, which every child would inherit, a child without dpdb too (pytest run
    in a virtual environment of its own would fail to load it). xdist's workers carry the agent,
    and do the same when they import pytest."""

    name = "pytest"
    modules = ("_pytest.config",)
    PLUGIN = "dpdb.frameworks.pytest_plugin"

    def hook(self, config):
        if self.PLUGIN not in config.default_plugins:
            config.default_plugins = tuple(config.default_plugins) + (self.PLUGIN,)


class Loky:
    """A loky worker (joblib's default backend, or loky itself) catches what a task raises and
    sends it to the caller, whose process has the exception but not the worker's frames. The
    worker runs each task through _CallItem.__call__: wrapped, the session opens in the worker
    before the exception leaves it."""

    name = "loky"
    modules = ("joblib.externals.loky.process_executor", "loky.process_executor")

    def hook(self, executor):
        call_item = executor._CallItem
        if getattr(call_item, "_dpdb_post_mortem", False):
            return
        run = call_item.__call__

        def call_with_post_mortem(item):
            try:
                return run(item)
            except Exception as error:
                post_mortem(error, error.__traceback__,
                            "loky: post-mortem of %s in the worker that ran %s (the caller gets "
                            "the exception once you continue)" % (type(error).__name__,
                                                                  _task_name(item)))
                sent_away(error)
                raise

        call_item.__call__ = call_with_post_mortem
        call_item._dpdb_post_mortem = True


def _task_name(item):
    function = getattr(item, "fn", None)
    # joblib sends a batch of calls as one task: the function of its first call names it.
    batch = getattr(function, "items", None)
    if batch:
        function = batch[0][0]
    return getattr(function, "__qualname__", None) or type(function).__name__


class _ProcessPool:
    """A worker of a process pool catches what a task raises and wraps it,
    with its traceback as text, to send it to the caller, whose process gets the exception but
    not the worker's frames. The wrapper is made in the worker's except clause, with the
    exception's traceback, in the worker process's main thread: a session opened there has the
    task's frames, and the worker sends the exception on once it is continued. The wrapper's
    class is patched in place (the worker looks it up at every task), so the traceback the
    caller is sent has no frame of dpdb's."""

    def hook(self, module):
        wrapper = getattr(module, self.wrapper)
        if getattr(wrapper, "_dpdb_post_mortem", False):
            return
        wrap = wrapper.__init__
        name = self.name

        def wrap_with_post_mortem(wrapped, exception, traceback, *args, **kwargs):
            if isinstance(exception, Exception):  # not an exit, nor Ctrl-C
                post_mortem(exception, traceback,
                            "%s: post-mortem of %s in the worker that ran %s (the caller gets "
                            "the exception once you continue)" % (
                                name, type(exception).__name__, _task_of(traceback)))
                sent_away(exception)
            wrap(wrapped, exception, traceback, *args, **kwargs)

        wrapper.__init__ = wrap_with_post_mortem
        wrapper._dpdb_post_mortem = True


class Pool(_ProcessPool):
    """multiprocessing.Pool (map, apply_async, imap...): multiprocessing.pool.worker, and the
    same in `multiprocess` (dill pickles its tasks: a lambda, a closure). A ThreadPool's worker
    runs in the caller's process, where the exception keeps its frames: it wraps nothing."""

    name = "pool"
    modules = ("multiprocessing.pool", "multiprocess.pool")
    wrapper = "ExceptionWithTraceback"


class Executor(_ProcessPool):
    """concurrent.futures.ProcessPoolExecutor (submit, map): its _process_worker."""

    name = "executor"
    modules = ("concurrent.futures.process",)
    wrapper = "_ExceptionWithTraceback"


class Billiard:
    """billiard.Pool (Celery's prefork pool, or used as a multiprocessing.Pool): its Worker
    catches what a task raises and wraps sys.exc_info() in an ExceptionInfo, looked up in
    billiard.pool's globals at every task. That name is given a function that opens the session
    first and makes billiard's own object (the one the caller is sent, pickled): billiard.einfo's
    class stays as it is for Celery, whose own strategy answers for a task's failure (Celery's
    tracer catches it before the pool does)."""

    name = "billiard"
    modules = ("billiard.pool",)

    def hook(self, module):
        make_info = module.ExceptionInfo
        if getattr(make_info, "_dpdb_post_mortem", False):
            return

        def info_with_post_mortem(*args, **kwargs):
            _, exception, traceback = sys.exc_info()
            if isinstance(exception, Exception):  # not an exit, nor Ctrl-C
                post_mortem(exception, traceback,
                            "billiard: post-mortem of %s in the worker that ran %s (the caller "
                            "gets the exception once you continue)" % (
                                type(exception).__name__, _task_of(traceback)))
                sent_away(exception)
            return make_info(*args, **kwargs)

        info_with_post_mortem._dpdb_post_mortem = True
        module.ExceptionInfo = info_with_post_mortem


_POOL_MODULES = ("multiprocessing", "multiprocess", "billiard", "concurrent")


def _task_of(traceback):
    """The task's function: the first frame of the traceback below the pool's own (its worker,
    mapstar, _process_chunk)."""
    entry = traceback
    while entry is not None:
        frame = entry.tb_frame
        if frame.f_globals.get("__name__", "").partition(".")[0] not in _POOL_MODULES:
            return getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
        entry = entry.tb_next
    return "a task"


STRATEGIES = (Flask, Django, Celery, Pytest, Loky, Pool, Billiard, Executor)


def install(open_session):
    """Who opens the sessions, from _exceptions (None: nobody; the hooks stay in and do nothing).
    The first time somebody does, each strategy that is on hooks its framework as soon as the
    framework is imported (or now, if it is already)."""
    global _open, _installed
    _open = open_session
    if open_session is None or _installed:
        return
    _installed = True
    for strategy in _switches.enabled("DPDB_POST_MORTEM_HOOKS", STRATEGIES):
        for module in strategy.modules:
            _on_import.when_imported(module, _guarded(strategy))


def _guarded(strategy):
    def hook(module):
        try:
            strategy().hook(module)
        except Exception as error:  # a framework version we do not know: leave it alone
            _switches.warn_once("%s post-mortem strategy: %r" % (strategy.name, error))

    return hook
