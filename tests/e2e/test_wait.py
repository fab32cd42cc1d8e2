"""Nobody attaches: DPDB_WAIT says whether a paused thread waits forever, or continues or exits
after N seconds. No hub: with a terminal breakpoint() is plain pdb; without one it says on stderr
what it waits for."""

import os
import select
import subprocess
import time

import pytest

from conftest import DPDB, PROMPT, PYTHON, TIMEOUT, finish, plain, program, stop, stop_line

PROGRAM = program("sessions.py")


def hub(dpdb, state_dir=None):
    path = os.path.join(dpdb.root, "hub.sock")
    args = ["dpdb", "hub", "--socket", path] + (["--state-dir", state_dir] if state_dir else [])
    child = dpdb.spawn(*args)
    child.expect("dpdb hub listening on unix:%s" % path)
    return "unix:" + path


def start(dpdb, how, wait, hub_address):
    """The program with no terminal, either under `dpdb run` or as plain python with
    PYTHONBREAKPOINT=dpdb.set_trace; its sessions go to the hub at hub_address."""
    env = dict(dpdb.env, DPDB_WAIT=wait, DPDB_HUB=hub_address)
    if how == "dpdb run":
        command = [DPDB, "run", PROGRAM]
    else:
        command = [PYTHON, PROGRAM]
        env["PYTHONBREAKPOINT"] = "dpdb.set_trace"
    return subprocess.Popen(command, env=env, cwd=dpdb.root, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def finished(process):
    try:
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        stop(process)
    return process.returncode, out, err


def read_stderr_line(process, timeout=TIMEOUT):
    """The next line of a process's stderr, waiting at most timeout."""
    deadline = time.monotonic() + timeout
    line = b""
    fd = process.stderr.fileno()  # unbuffered: select() must see what is not read yet
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0, "no line on stderr; so far %r" % line
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            char = os.read(fd, 1)
            assert char, "stderr closed; so far %r" % line
            line += char
    return line.decode()


@pytest.mark.parametrize("how, wait", [("dpdb run", "continue:1"), ("python", "continue:1"),
                                       ("python", "1")])
def test_continue_after_n_seconds_with_nobody_attached(dpdb, how, wait):
    status, out, err = finished(start(dpdb, how, wait, hub(dpdb)))
    assert "no client attached within 1s (DPDB_WAIT); continuing" in err, err
    assert status == 0, (out, err)
    assert "results [0, 10, 20]" in out and "program done" in out


@pytest.mark.parametrize("how", ["dpdb run", "python"])
def test_exit_after_n_seconds_with_nobody_attached(dpdb, how):
    status, out, err = finished(start(dpdb, how, "exit:1", hub(dpdb)))
    assert "no client attached within 1s (DPDB_WAIT); exiting" in err, err
    assert status == 1, (out, err)
    assert "main pid" in out and "results" not in out and "program done" not in out


def test_no_hub_and_a_terminal_is_plain_pdb(dpdb):
    child = dpdb.spawn(PYTHON, PROGRAM, env={"PYTHONBREAKPOINT": "dpdb.set_trace"})
    child.expect(r"sessions\.py\(\d+\)main\(\)\r\n" + stop_line("results"))
    child.expect(r"\r\n\(Pdb\) ")
    child.sendline("p first")
    child.expect(r"'first stop'")
    child.expect(PROMPT)
    child.sendline("c")
    child.expect("program done")
    finish(child, 0)
    transcript = plain(child.logfile_read.getvalue())
    assert "[dpdb]" not in transcript and "pid" not in transcript.split("main pid")[1]


def test_dead_hub_and_no_terminal_says_what_it_waits_for(dpdb):
    dead = "unix:" + os.path.join(dpdb.root, "nobody-listens.sock")
    process = start(dpdb, "python", "forever", dead)
    try:
        line = read_stderr_line(process)
        assert line.startswith("dpdb: pid %d paused at %s:" % (process.pid, PROGRAM)), line
        assert dead in line and "waits as long as it takes" in line, line
        assert process.poll() is None  # and it does wait
    finally:
        stop(process)


def test_dead_hub_with_exit_policy_says_so_and_exits(dpdb):
    dead = "unix:" + os.path.join(dpdb.root, "nobody-listens.sock")
    status, out, err = finished(start(dpdb, "python", "exit:1", dead))
    assert "paused at %s:" % PROGRAM in err and dead in err and "1s, then exits" in err, err
    assert status == 1 and "program done" not in out


@pytest.mark.parametrize("secret_from", ["DPDB_TOKEN", "the hub's token file"])
def test_hub_that_comes_later_gets_the_waiting_session(dpdb, secret_from):
    """The agent keeps dialling: a hub started (or restarted, with its secret) after the stop
    receives the session, and a client can attach. Given only DPDB_HUB, the agent reads the
    secret from the token file that the hub writes beside its socket when it starts."""
    state = os.path.join(dpdb.root, "state")
    os.makedirs(state, mode=0o700)
    if secret_from == "DPDB_TOKEN":
        secret = "5ec2e7" * 8
        fd = os.open(os.path.join(state, "secret"), os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, (secret + "\n").encode())
        os.close(fd)
        dpdb.env["DPDB_TOKEN"] = secret
    address = "unix:" + os.path.join(dpdb.root, "hub.sock")
    process = start(dpdb, "python", "forever", address)
    try:
        assert "waits as long as it takes" in read_stderr_line(process)
        assert hub(dpdb, state) == address
        listing = dpdb.wait_ls(lambda listing: len(listing["sessions"]) == 1,
                               env={"DPDB_HUB": address})
        assert listing["sessions"][0]["pid"] == process.pid
        user = dpdb.spawn("dpdb", "attach", env={"DPDB_HUB": address})
        user.expect(r"attached to session \d+: pid %d" % process.pid)
        user.expect(PROMPT)
        user.sendline("c")
        user.expect("continued")
        finish(user, 0)
        status, out, err = finished(process)
    finally:
        stop(process)
    assert status == 0 and "program done" in out


def test_no_hub_configured_and_no_terminal_skips_the_breakpoint(dpdb):
    process = subprocess.Popen([PYTHON, PROGRAM], env=dict(dpdb.env,
                                                           PYTHONBREAKPOINT="dpdb.set_trace"),
                               cwd=dpdb.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    status, out, err = finished(process)
    assert status == 0 and "program done" in out
    assert "breakpoint skipped in pid %d" % process.pid in err and "DPDB_HUB" in err, err
