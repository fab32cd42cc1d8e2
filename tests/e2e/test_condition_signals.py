"""A signal handler's exception raised while a breakpoint's condition runs reaches the program,
as it would without dpdb: bdb's effective() evaluates a condition inside a bare except, so its
sys.exit() (or a KeyboardInterrupt) was taken for "the condition raised" and the program stopped
at the breakpoint instead of exiting. On each strategy of the engine, and in a process reached by
`dpdb attach -p`."""

import os
import select
import signal
import subprocess
import sys
import time

import pytest

from conftest import PROMPT, TIMEOUT, finish, program

PROGRAM = program("condition_signal.py")
with open(PROGRAM) as source:
    LINE = [n for n, text in enumerate(source, 1) if "# the breakpoint's line" in text][0]
BREAK = "b %s:%d, slow()" % (PROGRAM, LINE)


@pytest.mark.parametrize("engine", ["native", "nocond", "bdb"])
def test_sigterm_in_a_condition_ends_a_dpdb_run_program_with_its_status(dpdb, engine):
    child = dpdb.spawn("dpdb", "run", PROGRAM, "stop", env={"DPDB_ENGINE": engine})
    child.expect(r"attached to session \d+")
    child.expect(PROMPT)
    child.sendline(BREAK)
    child.expect(r"Breakpoint \d+ at ")
    child.expect(PROMPT)
    child.sendline("c")
    child.expect(r"ready (\d+)")
    pid = int(child.match.group(1))
    child.expect("in the condition")
    os.kill(pid, signal.SIGTERM)
    child.expect("SIGTERM in slow")
    finish(child, status=7)
    assert "Error in condition" not in child.logfile_read.getvalue()


def read_line(process, timeout=TIMEOUT):
    """The program's next line of output (bounded)."""
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0 and select.select([process.stdout], [], [], left)[0], line
        byte = os.read(process.stdout.fileno(), 1)
        assert byte, "the program ended after %r" % line
        line += byte
    return line.decode().strip()


def test_sigterm_in_a_condition_ends_an_attached_program_with_its_status(dpdb):
    env = {k: v for k, v in dpdb.env.items()
           if not k.startswith("DPDB_") and k not in ("PYTHONPATH", "PYTHONBREAKPOINT")}
    target = subprocess.Popen([sys.executable, "-u", PROGRAM], env=env, stdout=subprocess.PIPE,
                              start_new_session=True)
    try:
        assert read_line(target) == "ready %d" % target.pid
        session = dpdb.spawn("dpdb", "attach", "-p", str(target.pid))
        session.expect(r"attached to session \d+")
        session.expect(PROMPT)
        session.sendline(BREAK)
        session.expect(r"Breakpoint \d+ at ")
        session.expect(PROMPT)
        session.sendline("c")
        assert read_line(target) == "in the condition"
        os.kill(target.pid, signal.SIGTERM)
        assert read_line(target) == "SIGTERM in slow"
        assert target.wait(timeout=TIMEOUT) == 7
        finish(session)
    finally:
        if target.poll() is None:
            os.killpg(target.pid, signal.SIGKILL)
            target.wait()
