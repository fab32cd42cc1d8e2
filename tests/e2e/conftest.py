"""End-to-end fixtures: the real `dpdb` executable, driven in a pseudo-terminal by pexpect, on
real Python programs, each test with its own private runtime directory."""

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pexpect
import pytest

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")
PROMPT = r"\(Pdb\) "
TIMEOUT = 30
PYTHON = sys.executable
# From 3.13 on, breakpoint() and set_trace() stop on their own line; before, on the next one.
STOPS_ON_CALL = sys.version_info >= (3, 13)


def stop_line(after, call=r"breakpoint\(\)"):
    """The `-> ` line pdb shows for a stop at a breakpoint() (or set_trace) call, as a pattern:
    the call itself on 3.13 and later, the line after it (pattern `after`) before."""
    return "-> " + (call if STOPS_ON_CALL else after)


def dpdb_executable():
    beside = os.path.join(os.path.dirname(sys.executable), "dpdb")
    found = beside if os.access(beside, os.X_OK) else shutil.which("dpdb")
    if not found:
        pytest.exit("the dpdb executable is not installed beside %s" % sys.executable, 2)
    return found


DPDB = dpdb_executable()


def as_a_foreground_job():
    # As a shell gives a job it runs in the foreground: Ctrl-C and a hangup at their defaults. A
    # test run started in the background by a non-interactive shell (CI's, or `dev/test &`) has
    # SIGINT ignored, and one under nohup SIGHUP, which every program would inherit: then nothing
    # Ctrl-C does could happen, and a program would outlive its terminal's hangup.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def program(name):
    return os.path.join(PROGRAMS, name)


class Session:
    """Environment and helpers for one test: its own runtime directory, HOME and hub."""

    def __init__(self, root):
        self.root = root
        # No hub, token or wait policy from outside; the engine strategy may be chosen, though.
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("DPDB_") or k == "DPDB_ENGINE"}
        self.env.pop("PYTHONBREAKPOINT", None)
        # Bytecode writing on, as users have it: what a run leaves behind must show here.
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        # Under `pytest -n`, a program this suite starts would inherit xdist's worker name and
        # rightly be named after it ("gw1"); the programs here are not xdist workers.
        for xdist_variable in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
                               "PYTEST_XDIST_TESTRUNUID"):
            self.env.pop(xdist_variable, None)
        self.env.update({
            "XDG_RUNTIME_DIR": os.path.join(root, "run"),
            "HOME": os.path.join(root, "home"),
            "TERM": "xterm",
            "PYTHONUNBUFFERED": "1",
            "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
        })
        # A pytest that a test runs (under dpdb) keeps its temporary directories here: at its exit
        # pytest deletes the older ones of its root, which by default would be this suite's own
        # (and a previous run's, for many seconds on a slow disk, past a test's timeout).
        self.env["PYTEST_DEBUG_TEMPROOT"] = os.path.join(root, "pytest-tmp")
        os.makedirs(self.env["XDG_RUNTIME_DIR"], mode=0o700)
        os.makedirs(self.env["HOME"])
        os.makedirs(self.env["PYTEST_DEBUG_TEMPROOT"])
        self.children = []
        self.strays = []

    def spawn(self, *args, env=None, cwd=None, timeout=TIMEOUT, dimensions=(50, 200)):
        """The dpdb client (or any command) in a pseudo-terminal."""
        command = list(args)
        if command[0] == "dpdb":
            command[0] = DPDB
        child = pexpect.spawn(command[0], command[1:], env=dict(self.env, **(env or {})),
                              cwd=cwd or self.root, encoding="utf-8", timeout=timeout,
                              dimensions=dimensions, codec_errors="replace",
                              preexec_fn=as_a_foreground_job)
        child.logfile_read = io.StringIO()  # the whole transcript, shown when a test fails
        child.name = " ".join(args)
        self.children.append(child)
        return child

    def run(self, *args, env=None, timeout=TIMEOUT, **kwargs):
        """A command without a terminal; returns the CompletedProcess."""
        command = list(args)
        if command[0] == "dpdb":
            command[0] = DPDB
        return subprocess.run(command, env=dict(self.env, **(env or {})), cwd=self.root,
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, **kwargs)

    def ls(self, *extra, env=None):
        """`dpdb ls --json` from another command: the parsed listing."""
        done = self.run("dpdb", "ls", "--json", *extra, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def wait_ls(self, predicate, *extra, env=None, timeout=TIMEOUT):
        """The first `dpdb ls --json` listing that satisfies predicate (polled, bounded)."""
        deadline = time.monotonic() + timeout
        while True:
            listing = self.ls(*extra, env=env)
            if predicate(listing):
                return listing
            if time.monotonic() > deadline:
                raise AssertionError("no listing satisfied the condition; the last one: %s"
                                     % json.dumps(listing, indent=1))
            time.sleep(0.1)

    def track(self, pid):
        """A process the test started indirectly (a daemon): killed at the end if still alive."""
        self.strays.append(pid)

    def transcripts(self):
        return "\n".join("=== %s\n%s" % (child.name, child.logfile_read.getvalue())
                         for child in self.children)

    def close(self):
        for child in self.children:
            if child.isalive():
                child.terminate(force=True)
            # What it started and left in its process group (the program of a `dpdb run` killed
            # mid-test, which a hangup would not end if it ignores SIGHUP).
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except OSError:
                pass  # all gone already
        for pid in self.strays:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.dpdb_failed = report.failed


@pytest.fixture
def dpdb(request):
    # Unix socket paths are short (108 bytes): keep the runtime directory near the root.
    root = tempfile.mkdtemp(prefix="dpdb-t")
    session = Session(root)
    yield session
    if getattr(request.node, "dpdb_failed", False):
        sys.stderr.write("terminal transcripts:\n%s\n" % session.transcripts())
    session.close()
    shutil.rmtree(root, ignore_errors=True)


def expect_all(child, *patterns, timeout=-1):
    """Waits for every pattern, in whatever order the output brings them (a paused process's
    notice may come before or after another's output); returns the matches in the order given."""
    pending = list(patterns)
    matches = {}
    while pending:
        index = child.expect(pending, timeout=timeout)
        matches[pending.pop(index)] = child.match
    return [matches[p] for p in patterns]


def stop(process):
    """Kills what is left of a background command started with start_new_session=True: it and
    everything it started (its process group)."""
    try:
        os.killpg(process.pid, 9)
    except OSError:
        pass  # all gone already
    process.wait(timeout=TIMEOUT)


def finish(child, status=0):
    """Waits for the end of a spawned command and checks its exit status."""
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == status, (child.exitstatus, child.signalstatus, child.before)


def wait_until(predicate, what, timeout=TIMEOUT, interval=0.05):
    """Polls predicate until it is true (bounded)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(interval)


ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>])")


def plain(text):
    """Terminal output without escape sequences, bells and carriage returns."""
    return ANSI.sub("", text).replace("\r", "").replace("\x07", "")


def line_of(path, marker):
    """The number of the line of a program that holds marker."""
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if marker in line:
                return number
    raise AssertionError("%s is not in %s" % (marker, path))
