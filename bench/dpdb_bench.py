"""What the benchmarks that drive the real `dpdb` command share: finding it, an environment of
their own, so that they never meet the user's hubs, a bounded wait, and an end to what they
started."""
import contextlib
import os
import signal
import shutil
import sys
import tempfile
import time


def dpdb_executable():
    """The `dpdb` beside this interpreter (a venv's bin/), else the one on PATH; exits if none."""
    beside = os.path.join(os.path.dirname(sys.executable), "dpdb")
    found = beside if os.access(beside, os.X_OK) else shutil.which("dpdb")
    if not found:
        sys.exit("no dpdb executable beside %s or on PATH" % sys.executable)
    return found


@contextlib.contextmanager
def private_environment(**extra):
    """os.environ plus `extra`, with a runtime directory of its own (removed afterwards) and no
    DPDB_HUB; this interpreter's directory first on PATH, for the programs `dpdb run` starts."""
    runtime = tempfile.mkdtemp(prefix="dpdb-bench-")
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, **extra)
    env.pop("DPDB_HUB", None)
    env["PATH"] = os.path.dirname(sys.executable) + ":" + env["PATH"]
    try:
        yield env
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def wait_for(predicate, what, seconds=30):
    """Polls `predicate` until it holds; exits saying `what` was not seen within `seconds`."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            sys.exit("timed out waiting for " + what)
        time.sleep(0.01)


def stop(process):
    """Ends a Popen started with start_new_session=True, and its whole process group."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    process.wait()
