"""The hub's global breakpoints in this process: which file each spec means, armed the moment
that file's code is about to run, and what this process tells the hub about each.

Which file a `FILE:LINE` spec means (the README states the rule): every loaded file whose path
ends with FILE, whole components; of those, files of installed packages (the standard library,
site-packages, dist-packages) count only when no other file matches, and the user is told which
were left out. Two or more remaining candidates are ambiguous: armed nowhere, the candidates
reported. A spec written `*/FILE:LINE` (`dpdb break --every`) arms every match.

The armed breakpoints are pdb's own (bdb.Breakpoint), each marked with the hub's id: what a
process has armed is read from them, so it cannot drift from what the hub is told, and a forked
child, which inherits them, reconciles them with the hub's list like any process.
"""

import bdb
import linecache
import os
import sys
import sysconfig
import threading

from dpdb import _agent, _exceptions
from dpdb._logpoints import Message

EVERY_MATCH = "*/"
# Exception breakpoints (an IDE's exception filters): specs that no file or function can be.
EXCEPTION_SPECS = {"raised exceptions": "raised", "uncaught exceptions": "uncaught"}

# The control thread arms when the hub's list changes; a thread about to run a watched file's
# code arms it then. Reentrant: arming may import, and an import may reach the watch.
_lock = threading.RLock()
# Held across fork(): a child must not inherit it held by a thread it does not have.
os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release,
                    after_in_child=_lock.release)
# Set while a thread arms (see code_appeared).
_arming = threading.local()
# Files whose code the watch saw appear, kept for later lists of the hub: code made by
# exec(compile(source, path)) has a file no module names, and a forked child, which has that code
# too, must keep the breakpoints it inherited there. At most this many.
_APPEARED_KEPT = 1024
# An importing thread waits for the control thread at most this long; past it, the timer arms
# (too late for a line that runs right after the import). The control thread holds it for
# milliseconds, unless the machine stalls: the bound only guards against a deadlock.
_WATCH_LOCK_WAIT = 5.0


def arming_here():
    """Whether this thread is arming the hub's breakpoints: dpdb's work, never a place to stop."""
    return getattr(_arming, "now", False)


def parse_spec(spec):
    """'FILE:LINE' -> (file, line); 'FUNCTION' or 'module.function' -> (None, name)."""
    file, colon, line = spec.rpartition(":")
    if colon and line.strip().isdigit() and file:
        return file.strip(), int(line)
    return None, spec.strip()


def _installed_roots():
    roots = set()
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(name)
        if path:
            roots.add(os.path.realpath(path) + os.sep)
    return tuple(roots)


_INSTALLED_ROOTS = _installed_roots()


def is_installed(path):
    """Whether a file belongs to an installed package or the standard library."""
    parts = path.split(os.sep)
    return ("site-packages" in parts or "dist-packages" in parts
            or os.path.realpath(path).startswith(_INSTALLED_ROOTS))


class Ambiguous(str):
    """A note saying that a spec's FILE matches several files here, so it is armed nowhere: the
    hub counts these apart ("ambiguous in 3")."""


def _note_for_hub(hub_id, note):
    said = {"id": hub_id, "note": str(note)}
    if isinstance(note, Ambiguous):
        said["ambiguous"] = True
    return said


def choose(spec_file, candidates):
    """(files to arm, note) for a spec's FILE among the files that match it."""
    if spec_file.startswith(EVERY_MATCH):
        return sorted(candidates), None
    own = sorted(c for c in candidates if not is_installed(c))
    installed = sorted(c for c in candidates if is_installed(c))
    pool = own or installed
    if len(pool) > 1:
        return [], Ambiguous("%s matches several files: %s; give a longer path, or `dpdb break "
                             "--every` for all of them" % (spec_file, ", ".join(pool)))
    if pool and own and installed:
        return pool, ("%s means %s; left out: %s (installed)"
                      % (spec_file, pool[0], ", ".join(installed)))
    return pool, None


def _find_function(name):
    """A function or method by (dotted) name among the loaded modules: (file, first line)."""
    head, _, attribute = name.rpartition(".")
    for module in list(sys.modules.values()):
        target = module
        try:
            for part in ([p for p in head.split(".") if p] + [attribute]):
                target = getattr(target, part)
        except Exception:
            continue
        code = getattr(getattr(target, "__func__", target), "__code__", None)
        if code is not None:
            return code.co_filename, code.co_firstlineno
    return None


def armed_here():
    """hub id -> [bdb breakpoints] armed in this process for the hub."""
    armed = {}
    for bp in bdb.Breakpoint.bpbynumber:
        hub_id = getattr(bp, "dpdb_global", None)
        if bp is not None and hub_id is not None:
            armed.setdefault(hub_id, []).append(bp)
    return armed


class HubBreakpoint(bdb.Breakpoint):
    """A hub breakpoint, whole before any thread can meet it: a logpoint never without its
    message, a hit count never without its ignore count. bdb.Breakpoint's constructor files the
    breakpoint in bplist, where every thread and the engine look, before its caller could add
    anything; here that filing goes to a dict of the instance's own, and the breakpoint goes into
    bplist once whole, in one append."""

    def __init__(self, file, line, cond, funcname, hub_id, ignore, message):
        self.bplist = {}  # read through self by bdb's constructor
        super().__init__(file, line, False, cond, funcname)
        del self.bplist
        self.dpdb_global = hub_id
        self.ignore = ignore
        if message is not None:
            self.dpdb_log = message
        # Appended whole: a thread that reads the line's list sees it there or not at all.
        bdb.Breakpoint.bplist.setdefault((file, line), []).append(self)


class GlobalBreakpoints:
    def __init__(self, holder):
        self.holder = holder  # () -> the Debugger that owns global breakpoints
        self.wanted = []      # the hub's list, as last received, unless stopped
        self.received = []    # the hub's list, as last received
        self.version = None   # ... and its version, echoed in what this process tells the hub
        self.notes = {}       # hub id -> what the user should know about it in this process
        self.modules_seen = 0
        self.stopped = False
        self.exceptions_armed = []  # hub ids of the exception breakpoints armed here
        self.appeared = set()  # files of watched names whose code appeared in this process
        # The code watch goes in now, before the engine starts: audit hooks run in the order
        # they were added, and the engine's own (3.12 looks there for the code of breakpoint
        # files) must come after ours, which arms the file of the code about to run.
        self._watch()

    def update(self, wanted, version):
        with _lock:
            self.received = wanted
            self.version = version
            # A process that is no longer debugged (`q`, dpdb detach -p) arms nothing.
            self.wanted = [] if self.stopped else wanted
            self.arm()
            self._watch()

    def stop(self):
        """The process is no longer debugged: the hub's breakpoints go, and stay out."""
        self._set_stopped(True)

    def resume(self):
        """Debugged again (dpdb attach -p after a release): the hub's breakpoints go back in."""
        self._set_stopped(False)

    def _set_stopped(self, stopped):
        with _lock:
            self.stopped = stopped
            self.wanted = [] if stopped else self.received
            self.arm()
            self._watch()

    def pending(self):
        armed = armed_here()
        return any(bp["id"] not in armed for bp in self.wanted)

    def recheck(self):
        """The timer's look at newly loaded modules: function specs, and files whose code came
        without an exec the watch sees."""
        if self.pending() and len(sys.modules) != self.modules_seen:
            with _lock:
                self.arm()

    def code_appeared(self, filename):
        """From the code watch: code of `filename` is about to run, or to be made, in this
        thread. Not while this thread arms: the engine's own code.replace() raises the watch."""
        if arming_here():
            return
        # Marked from the start: this may run in a thread that steps (breakpoint() makes the
        # engine copy code), and what it calls must not become the step's stop.
        _arming.now = True
        try:
            if filename.startswith("<") and not linecache.getlines(filename):
                return  # a string a library compiles (namedtuple's, dataclasses'): no lines
            if not _lock.acquire(timeout=_WATCH_LOCK_WAIT):
                return
            try:
                if len(self.appeared) < _APPEARED_KEPT and os.path.isabs(filename):
                    self.appeared.add(filename)
                self._arm(also=filename)
            finally:
                _lock.release()
        finally:
            _arming.now = False

    def arm(self, also=None):
        """Make the armed breakpoints match the hub's list, and tell the hub."""
        before, _arming.now = arming_here(), True
        try:
            self._arm(also)
        finally:
            _arming.now = before

    def _arm(self, also):
        from dpdb._engine import files_matching

        self.modules_seen = len(sys.modules)
        armed = armed_here()
        self.notes = {}
        self._arm_exceptions([bp for bp in self.wanted if bp["spec"] in EXCEPTION_SPECS])
        lines = [bp for bp in self.wanted if bp["spec"] not in EXCEPTION_SPECS]
        if not lines and not armed:
            self._tell()
            return  # nothing to arm: no debugger, no engine
        debugger = self.holder()
        wanted = {bp["id"]: bp for bp in lines}
        for hub_id in set(armed) | set(wanted):
            targets = self._targets(wanted[hub_id], files_matching, also) if hub_id in wanted else {}
            current = {(bp.file, bp.line): bp for bp in armed.get(hub_id, [])}
            for place, bp in current.items():
                if place not in targets:
                    debugger.clear_bpbynumber(str(bp.number))
            for (file, line), funcname in targets.items():
                if (file, line) not in current:
                    self._set(debugger, hub_id, wanted[hub_id], file, line, funcname)
        self._tell()

    def _arm_exceptions(self, wanted):
        kinds = {EXCEPTION_SPECS[bp["spec"]]: bp for bp in wanted}
        self.exceptions_armed = []
        if not kinds and not _exceptions.armed():
            return
        make = type(self.holder())  # a Debugger, for the thread that stops
        _exceptions.want_uncaught(
            "hub", make.uncaught_stop if "uncaught" in kinds else None)
        if "uncaught" in kinds:
            self.exceptions_armed.append(kinds["uncaught"]["id"])
        if _exceptions.want_raised((lambda frame, exception: make().raised_stop(
                frame, exception)) if "raised" in kinds else None, is_installed):
            if "raised" in kinds:
                self.exceptions_armed.append(kinds["raised"]["id"])
        else:
            self.notes[kinds["raised"]["id"]] = (
                "raised exceptions need Python 3.12+ (sys.monitoring); this is %d.%d"
                % sys.version_info[:2])

    def _targets(self, bp, files_matching, also):
        """{(file, line): funcname} where a hub breakpoint belongs in this process."""
        file, where = parse_spec(bp["spec"])
        if file is None:
            found = _find_function(where)
            return {found: where.rpartition(".")[2]} if found else {}
        matches = files_matching(file[len(EVERY_MATCH):] if file.startswith(EVERY_MATCH)
                                 else file, self.appeared | ({also} if also else set()))
        chosen, note = choose(file, matches)
        if note:
            self.notes[bp["id"]] = note
        return {(path, where): None for path in chosen}

    def _set(self, debugger, hub_id, bp, file, line, funcname):
        message = None
        if bp.get("log"):
            try:
                message = Message(bp["log"])
            except SyntaxError as error:
                self.notes[hub_id] = "logpoint message: %s" % error.msg
                return
        file = debugger.canonic(file)
        if not linecache.getline(file, line):
            self.notes[hub_id] = "Line %s:%d does not exist" % (file, line)  # bdb's words
            return
        # A hit count (an IDE's hitCondition): pdb's ignore count, counted in this process.
        HubBreakpoint(file, line, bp.get("condition") or None, funcname, hub_id,
                      bp.get("ignore", 0), message)
        debugger._dpdb_breaks_changed()

    def _tell(self):
        import json

        status = {"resolved": sorted(set(armed_here()) | set(self.exceptions_armed))}
        if self.version is not None:  # a hub of an earlier release numbers no list
            status["version"] = self.version
        if self.notes:
            status["notes"] = [_note_for_hub(i, n) for i, n in sorted(self.notes.items())]
        # Posted, not sent: code appears in the program's threads, which a hub that stopped
        # reading must not hold.
        _agent.post_status("break_status", json.dumps(status))

    def _watch(self):
        names = set()
        for bp in self.wanted:
            file, _ = parse_spec(bp["spec"])
            if file is not None:
                # "<string>" (python -c's program) is watched as it is written.
                names.add(os.path.basename(file) if file.endswith((".py", ">"))
                          else os.path.basename(file) + ".py")
        _agent.watch_code(self.code_appeared, names)
