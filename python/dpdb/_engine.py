"""The breakpoint engine's Python face.

``NativeEngineMixin`` sits before ``pdb.Pdb`` in the MRO::

    class Debugger(NativeEngineMixin, pdb.Pdb): ...

With the native strategy it replaces bdb's ``sys.settrace`` dispatch by the C++ engine in
``dpdb._engine_native``: the engine receives the interpreter's events (sys.monitoring on 3.12+, a C
trace function on 3.9-3.11), decides in C++ whether bdb could act on one (a line holding a
breakpoint, a step/next/return/until target, an exception in a stepped frame), and only then calls
``self.trace_dispatch`` exactly as CPython's trampoline would. Everything bdb and pdb decide —
``stop_here``, ``break_here``, conditions, ignore counts, temporary breakpoints, ``commands``,
``display``, ``retval`` — is still decided by their own code. The one shortcut: at a breakpoint
line with a condition, the engine does bdb.effective()'s work in the frame (hits, conditions,
ignore counts) and calls bdb only when a breakpoint stops there, handing effective()'s answer
over so that no condition runs twice (src/engine/condition.hpp).

Strategies, chosen by the environment variable ``DPDB_ENGINE``:

``native``
    the C++ engine with the fastest mechanism for this interpreter (the default when it imports
    and supports this interpreter): sys.monitoring on 3.12+; on 3.9-3.11 a PEP 523 frame
    evaluator that runs code holding breakpoints from a copy with the breakpoint checks compiled
    into its bytecode, untraced, and a C trace function for what cannot run that way (frames
    already running when the breakpoint was set, stepping); on 3.11, while that is safe, no
    evaluator at all: the functions themselves get the patched code ("swap mode", because any
    evaluator costs 3.11 its inlined Python-to-Python calls); on 3.12 no global event at all
    while only breakpoints are armed ("scan mode", because a global PY_START costs 3.12's
    call-heavy code a few per cent for good), and the superinstructions that sys.monitoring
    takes out of a code object put back once its events are off;
``nocond``
    ``native`` without breakpoint conditions answered by the engine: every time a breakpoint
    line with a condition runs, bdb evaluates the condition (as under pdb), instead of the engine
    evaluating it in the frame and calling bdb only when it is true or raises;
``condpy``
    ``native`` with every condition the engine answers called as Python (``lambda <names>:
    (cond)``) and the hits of a false one written to the Breakpoint at every hit, instead of
    simple conditions (comparisons of variables and constants, ``and``/``or``/``not``) answered
    in C and the hits counted in C until bdb or pdb looks;
``noguard``
    ``native`` without the guards that answer a breakpoint line's conditions in the code itself
    while they are known false in C: on 3.9-3.11 every compiled-in check is called at every hit
    of its line, on 3.12+ no function is given a fast copy (every hit is a line event);
``noswap``
    3.9-3.11 only: ``native`` without 3.11's swap mode (the evaluator is installed whenever
    breakpoints are armed); the same as ``native`` on 3.9 and 3.10;
``noscan``
    3.12+ only: ``native`` without 3.12's scan mode (the code of breakpoint files is found by a
    global PY_START event, which leaves call-heavy code on 3.12 a few per cent slower, instead of
    heap scans, a code watcher and an audit hook); the same as ``native`` on 3.13;
``nosuper``
    3.12 only: ``native`` without putting superinstructions back: a code object that had events
    (the code of a breakpoint file) keeps running a few per cent slower after it answered
    DISABLE; the same as ``native`` on 3.13;
``gate``
    3.9-3.11 only: the PEP 523 evaluator without the bytecode checks: frames of code holding
    breakpoints run under the C trace function;
``tracer``
    3.9-3.11 only: the C trace function on every thread, without the PEP 523 gate (for programs
    that install their own frame evaluator, e.g. a JIT);
``bdb``
    bdb's own ``sys.settrace`` tracing: the mixin changes nothing.
"""

import bdb
import contextlib
import functools
import linecache
import os
import pdb
import sys
import _thread

__all__ = [
    "NativeEngineMixin",
    "engine_available",
    "engine_backend",
    "engine_strategy",
    "files_matching",
    "resolve_breakpoint_file",
    "resolve_breakpoint_arg",
]

STRATEGIES = ("native", "nocond", "condpy", "noguard", "noswap", "noscan", "nosuper", "gate", "tracer", "bdb")
# Strategies that exist on 3.9-3.11 only, and on 3.12+ only.
LEGACY_STRATEGIES = ("noswap", "gate", "tracer")
MONITORING_STRATEGIES = ("noscan", "nosuper")

try:
    from dpdb import _engine_native as _native
except ImportError as exc:  # built without the extension, or for another interpreter
    _native = None
    _import_error = exc
else:
    _import_error = None

_init_lock = _thread.allocate_lock()
# Held across fork(), so that a child never inherits it locked by a thread it does not have.
os.register_at_fork(before=_init_lock.acquire, after_in_parent=_init_lock.release,
                    after_in_child=_init_lock.release)
_initialised = False


def engine_available():
    """True when the C++ engine imports and supports this interpreter."""
    return _native is not None and (3, 9) <= sys.version_info[:2] <= (3, 13)


def engine_backend():
    """'monitoring' (3.12+), 'tracer' (3.9-3.11), or None without the native engine."""
    return _native.backend() if engine_available() else None


def engine_strategy():
    """The strategy in force: DPDB_ENGINE if set, else 'native' when available, else 'bdb'."""
    wanted = os.environ.get("DPDB_ENGINE", "").strip().lower()
    if wanted and wanted not in STRATEGIES:
        raise ValueError(
            "DPDB_ENGINE=%r: expected one of %s" % (wanted, ", ".join(STRATEGIES)))
    if wanted and wanted != "bdb" and not engine_available():
        raise RuntimeError("DPDB_ENGINE=%s but the native engine is unavailable: %s"
                           % (wanted, _import_error or "unsupported interpreter"))
    if wanted in LEGACY_STRATEGIES and sys.version_info >= (3, 12):
        raise ValueError("DPDB_ENGINE=%s exists on Python 3.9-3.11 only" % wanted)
    if wanted in MONITORING_STRATEGIES and sys.version_info < (3, 12):
        raise ValueError("DPDB_ENGINE=%s exists on Python 3.12+ only" % wanted)
    if wanted:
        return wanted
    return "native" if engine_available() else "bdb"


def _canonic(filename):
    # bdb.Bdb.canonic without an instance: the engine resolves co_filename once per file.
    if filename == "<" + filename[1:-1] + ">":
        return filename
    return os.path.normcase(os.path.abspath(filename))


# Threads setting breakpoints in a batch (_pause arms every line of a thread's frames): their
# changes reach the engine in one refresh at the end. Each refresh derives every armed line again
# and re-instruments code (3.12+): one per breakpoint made a pause of a thread in
# threading.Event.wait (35 lines) take 1.4 s on 3.13.
_batching = _thread._local()


def _refresh():
    if not getattr(_batching, "on", False):
        _native.refresh()


@contextlib.contextmanager
def one_refresh(debugger):
    """The breakpoints `debugger` sets or clears inside reach the engine together, at the end."""
    if getattr(_batching, "on", False):
        yield
        return
    _batching.on = True
    try:
        yield
    finally:
        _batching.on = False
        changed = getattr(debugger, "_dpdb_breaks_changed", None)
        if changed is not None:
            changed()


class _WatchedBplist(dict):
    """bdb.Breakpoint.bplist that tells the engine when a (file, line) appears or vanishes, so that
    breakpoints made by any Bdb instance, in any thread, take effect at once."""

    def __setitem__(self, key, value):
        fresh = key not in self
        super().__setitem__(key, value)
        if fresh:
            _refresh()

    def __delitem__(self, key):
        super().__delitem__(key)
        _refresh()

    def pop(self, *args):
        value = super().pop(*args)
        _refresh()
        return value

    def popitem(self):
        item = super().popitem()
        _refresh()
        return item

    def clear(self):
        super().clear()
        _refresh()

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        _refresh()

    def setdefault(self, key, default=None):
        fresh = key not in self
        value = super().setdefault(key, default)
        if fresh:
            _refresh()
        return value


def _watch_bplist():
    # Breakpoint.clearBreakpoints() rebinds bplist to a plain dict; wrap whatever is there now.
    if type(bdb.Breakpoint.bplist) is not _WatchedBplist:
        bdb.Breakpoint.bplist = _WatchedBplist(bdb.Breakpoint.bplist)


_bdb_effective = bdb.effective


def _effective(filename, lineno, frame):
    # The engine did effective()'s work for the line it is delivering (hits, conditions, ignore
    # counts): its answer, so that no condition runs twice.
    verdict = _native.take_verdict(frame, lineno)  # also writes the hits counted in C
    if verdict is not None:
        return verdict
    return _bdb_effective(filename, lineno, frame)


def _ensure_initialised(strategy):
    global _initialised
    with _init_lock:
        if not _initialised:
            _native.init(_canonic)
            # bdb.Bdb.break_here calls it by its global name, dpdb's Debugger as bdb.effective.
            bdb.effective = _effective
            _initialised = True
        full = ("native", "nocond", "condpy", "noguard")
        _native.allow(gate=strategy in full + ("noswap", "gate"),
                      patch=strategy in full + ("noswap",),
                      swap=strategy in full,
                      scan=strategy in full + ("nosuper",),
                      superinstructions=strategy in full + ("noscan",),
                      conditions=strategy != "nocond",
                      fast_conditions=strategy not in ("nocond", "condpy"),
                      guard=strategy != "noguard")
        _watch_bplist()


def _loaded_files():
    seen = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path not in seen:
            seen.add(path)
            yield path
    main = getattr(sys.modules.get("__main__"), "__file__", None) or (sys.argv[0] if sys.argv else None)
    if main and main not in seen:
        seen.add(main)
        yield main
    # Files of code made without an import (functions unpickled by value), which no module names.
    from dpdb import _agent

    for path in _agent.made_files():
        if path not in seen:
            yield path


def files_matching(spec, also=()):
    """The loaded source files (and those of ``also``: files whose code is about to run, or was
    made without an import) that ``spec`` means: a set of
    the canonic paths their code runs under. A path (absolute, or ./ or ../ from this process's
    directory) means the file itself, whatever spelling the code runs under (a symlinked
    directory, a bind mount: the same device and inode); a suffix ('work.py', 'pkg/work.py')
    means the files whose path, or whose real path, ends with it, whole path components; failing
    those, a suffix that names a file from this process's directory means that file."""
    if not spec:
        return set()
    if spec.startswith("<") and spec.endswith(">"):
        # Code compiled under a name in angle brackets (python -c's "<string>", IPython's
        # cells): no file on disk, but linecache holds its lines when the name means one.
        return {spec} if linecache.getlines(spec) else set()
    suffix = os.path.normcase(os.path.normpath(spec))
    if not os.path.splitext(suffix)[1]:
        suffix += ".py"
    parts = suffix.split(os.sep)
    # Only a file of the spec's name can match: the hundreds of others loaded are not worth
    # canonicalizing (arming in every process of a job pays for each).
    names = {os.path.basename(spec), parts[-1]}
    sources = {_source(path) for path in list(also) + list(_loaded_files())
               if _source_name(path) in names}
    if os.path.isabs(spec) or spec.startswith((os.curdir + os.sep, os.pardir + os.sep)):
        if os.path.exists(spec):
            return _same_file(spec, sources) or {_canonic(spec)}
    matches = set()
    for source in sources:
        if source.split(os.sep)[-1] != parts[-1] or not os.path.exists(source):
            continue
        if (source.split(os.sep)[-len(parts):] == parts
                or os.path.realpath(source).split(os.sep)[-len(parts):] == parts):
            matches.add(source)
    if not matches and os.path.isfile(suffix):
        # Also a file whose code was made without an import before the breakpoint came
        # (exec(compile(source, path))): no module names it.
        matches = _same_file(suffix, sources) or {_canonic(suffix)}
    return matches


def _source(path):
    canonic = _canonic(path)
    return canonic[:-1] if canonic.endswith((".pyc", ".pyo")) else canonic


def _source_name(path):
    """The name of _source(path), without its work."""
    name = os.path.basename(path)
    return name[:-1] if name.endswith((".pyc", ".pyo")) else name


def _same_file(path, sources):
    """Those of ``sources`` that are the file at ``path`` (same device and inode)."""
    try:
        wanted = os.stat(path)
    except OSError:
        return set()
    same = set()
    for source in sources:
        if os.path.basename(source) != os.path.basename(path):
            continue  # a file of another name is not worth a stat
        try:
            found = os.stat(source)
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (wanted.st_dev, wanted.st_ino):
            same.add(source)
    return same


def resolve_breakpoint_file(spec):
    """The one loaded source file whose path ends with ``spec``, or None when nothing matches.
    Raises ValueError if several files match, naming them, so that the user can add a directory
    to the spec."""
    matches = files_matching(spec)
    if len(matches) > 1:
        raise ValueError("%s matches several files: %s" % (spec, ", ".join(sorted(matches))))
    return matches.pop() if matches else None


def resolve_breakpoint_arg(arg):
    """Rewrite a pdb ``break`` argument 'suffix:line[, cond]' to use the file it resolves to.

    Arguments that are not file:line (function names, bare line numbers) or whose file does not
    resolve come back unchanged, for pdb to judge.
    """
    head, comma, cond = arg.partition(",")
    filename, colon, line = head.rpartition(":")
    if not colon or not filename.strip() or not line.strip().isdigit():
        return arg
    resolved = resolve_breakpoint_file(filename.strip())
    if resolved is None:
        return arg
    return "%s:%s%s%s" % (resolved, line.strip(), comma, cond)


def _changes_breakpoints(name):
    """NativeEngineMixin's `name`: the base class's method of that name, after which the engine
    hears that breakpoints changed. It keeps pdb's docstring, which `help` shows for do_*."""

    @functools.wraps(getattr(pdb.Pdb, name))
    def method(self, *args, **kwargs):
        result = getattr(super(NativeEngineMixin, self), name)(*args, **kwargs)
        self._dpdb_breaks_changed()
        return result

    return method


class NativeEngineMixin:
    """Drives a bdb.Bdb / pdb.Pdb subclass from the C++ engine. Place it first in the bases.

    Under the native strategies, set_trace() arms the engine for the calling thread instead of
    sys.settrace(); the stepping commands reach the engine through bdb's own _set_stopinfo, and
    breakpoint changes through bdb.Breakpoint.bplist. Under 'bdb' every method defers to bdb.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        strategy = engine_strategy()
        self._dpdb_native = strategy != "bdb"
        if self._dpdb_native:
            _ensure_initialised(strategy)

    # -- entry points ---------------------------------------------------------------------

    def set_trace(self, frame=None, *args, **kwargs):
        if frame is None:
            frame = sys._getframe().f_back
        if not self._dpdb_native:
            return super().set_trace(frame, *args, **kwargs)
        # bdb's own set_trace prepares the stack (f_trace, botframe, stepping state) and ends
        # with sys.settrace(); the engine takes over from there.
        super().set_trace(frame, *args, **kwargs)
        sys.settrace(None)
        _watch_bplist()
        _native.attach(self)

    def set_continue(self):
        super().set_continue()
        if self._dpdb_native:
            _native.update(self)

    def set_quit(self):
        super().set_quit()
        if self._dpdb_native:
            _native.update(self)

    def _set_stopinfo(self, *args, **kwargs):
        super()._set_stopinfo(*args, **kwargs)
        if getattr(self, "_dpdb_native", False):
            _native.update(self)

    # -- breakpoints ----------------------------------------------------------------------

    def onecmd(self, line):
        # The engine counts the hits of false conditions in C: `break`, `info`-like listings and
        # commands read them from the Breakpoints.
        if getattr(self, "_dpdb_native", False):
            _native.flush_hits()
        return super().onecmd(line)

    def lookupmodule(self, filename):
        # pdb first, so that whatever stock pdb resolves stays the same; then path suffixes.
        found = super().lookupmodule(filename)
        if found is None:
            try:
                found = resolve_breakpoint_file(filename)
            except ValueError as exc:
                self.error(str(exc))
                return None
        return found

    def _dpdb_breaks_changed(self):
        if self._dpdb_native:
            _watch_bplist()
            _refresh()

    # Every change of pdb's breakpoints reaches the engine. `condition`, `enable` and `disable`
    # count too: which lines hold an enabled breakpoint with a condition changes, and with it the
    # code those lines run (3.12+: a function's fast copy).
    set_break = _changes_breakpoints("set_break")
    clear_break = _changes_breakpoints("clear_break")
    clear_bpbynumber = _changes_breakpoints("clear_bpbynumber")
    clear_all_file_breaks = _changes_breakpoints("clear_all_file_breaks")
    clear_all_breaks = _changes_breakpoints("clear_all_breaks")
    do_condition = _changes_breakpoints("do_condition")
    do_enable = _changes_breakpoints("do_enable")
    do_disable = _changes_breakpoints("do_disable")

    # -- threads --------------------------------------------------------------------------

    def _dpdb_debugger_for_thread(self, frame):
        """The debugger that handles a breakpoint hit in a thread that has none.

        The default shares this instance (what threading.settrace(pdb.trace_dispatch) would do).
        A multi-session debugger overrides this to return a fresh instance per thread; the
        engine then serves that thread from the returned instance, which should be in
        "continue" state (e.g. ``dbg.reset(); dbg.botframe = ...; dbg.set_continue()``).
        """
        return self

    def prepare_to_continue(self, frame):
        """Put this debugger in pdb's "continue" state for the thread running ``frame``, without
        stopping: what a debugger needs that serves a thread adopted at a breakpoint, or that owns
        breakpoints set from a thread of its own."""
        self.reset()
        if not hasattr(self, "_load_breaks"):
            # 3.9: a new Bdb does not see the breakpoints set through other instances (3.10+
            # loads them in __init__), and break_here looks only at its own table.
            for filename, lineno in list(bdb.Breakpoint.bplist):
                lines = self.breaks.setdefault(filename, [])
                if lineno not in lines:
                    lines.append(lineno)
        bottom = frame
        while bottom.f_back is not None:
            bottom = bottom.f_back
        self.botframe = bottom
        self._set_stopinfo(bottom, None, -1)

    def engine_serve_breakpoints(self):
        """Arm the engine for breakpoints in every thread, with this debugger as the one asked
        (``_dpdb_debugger_for_thread``) when a thread without a debugger reaches one. The calling
        thread does not stop. False under the 'bdb' strategy, which cannot watch other threads."""
        self.prepare_to_continue(sys._getframe(1))
        if not self._dpdb_native:
            return False
        _watch_bplist()
        _native.attach(self)
        return True

    def engine_detach(self):
        """Stop serving this debugger from the engine (e.g. when its session ends)."""
        if self._dpdb_native:
            _native.detach(self)
