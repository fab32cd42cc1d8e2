"""A standalone hub: `dpdb run` joins it with no terminal at all and its sessions wait for
`dpdb attach` from elsewhere; malformed and hostile input on the hub's socket costs the sender its
connection (one line in the hub's log) and disturbs nobody else."""

import hashlib
import hmac
import json
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess

import pexpect
import pytest

from conftest import (
    DPDB, PROMPT, PYTHON, expect_all, finish, program, stop, stop_line, wait_until)

PROGRAM = program("sessions.py")


class Hub:
    """`dpdb hub --socket PATH` in a terminal of its own; its log is what that terminal shows."""

    def __init__(self, dpdb, *options):
        self.path = os.path.join(dpdb.root, "hub.sock")
        self.address = "unix:" + self.path
        self.env = {"DPDB_HUB": self.address}
        self.child = dpdb.spawn("dpdb", "hub", "--socket", self.path, *options)
        self.child.expect("dpdb hub listening on %s" % self.address)
        self.child.expect(r"export DPDB_HUB=%s\r\n" % self.address)

    def log(self):
        try:  # what the hub printed so far (pexpect records it as it reads)
            while True:
                self.child.read_nonblocking(65536, timeout=0.05)
        except pexpect.TIMEOUT:
            pass
        return self.child.logfile_read.getvalue()

    def secret(self):
        with open(self.path + ".token") as f:
            return f.read().strip()


def start_in_background(dpdb, hub, *args, output):
    """`dpdb run` with DPDB_HUB, no terminal at all: stdin closed, output to a file, a session
    of its own."""
    return subprocess.Popen([DPDB, "run", PROGRAM] + list(args), env=dict(dpdb.env, **hub.env),
                            cwd=dpdb.root, stdin=subprocess.DEVNULL, stdout=output,
                            stderr=subprocess.STDOUT, start_new_session=True)


def test_background_run_waits_for_attach_from_elsewhere(dpdb):
    hub = Hub(dpdb)
    fifo = os.path.join(dpdb.root, "go")
    os.mkfifo(fifo)
    with open(os.path.join(dpdb.root, "run.out"), "w+") as output:
        run = start_in_background(dpdb, hub, "again", "--wait-for", fifo, output=output)
        try:
            # The program is up and registered, before any breakpoint.
            listing = dpdb.wait_ls(lambda listing: any(
                p["pid"] != run.pid and "sessions.py" in " ".join(p["argv"])
                for p in listing["processes"]), env=hub.env)
            assert listing["sessions"] == []

            waiting = dpdb.spawn("dpdb", "attach", "--next", env=hub.env)
            waiting.expect("waiting for the next breakpoint anywhere")
            with open(fifo, "w") as go:
                go.write("go\n")
            waiting.expect(r"attached to session (\d+)")
            first = int(waiting.match.group(1))
            waiting.expect(PROMPT)
            waiting.sendline("p first")
            waiting.expect("'first stop'")
            waiting.expect(PROMPT)
            waiting.sendline("c")
            waiting.expect("session %d continued" % first)
            finish(waiting, 0)

            # work(2) stops again: nobody is attached; the session waits, listed.
            listing = dpdb.wait_ls(lambda listing: len(listing["sessions"]) == 1, env=hub.env)
            [second] = listing["sessions"]
            assert second["function"] == "work" and not second["attached"]
            assert run.poll() is None

            later = dpdb.spawn("dpdb", "attach", env=hub.env)  # the only one
            later.expect(r"attached to session %d" % second["sid"])
            later.expect(stop_line(r"history\.append\(value\)"))
            later.expect(PROMPT)
            later.sendline("p i, value")
            later.expect(r"\(2, 20\)")
            later.expect(PROMPT)
            later.sendline("c")
            later.expect("session %d continued" % second["sid"])
            finish(later, 0)
            assert run.wait(timeout=30) == 0
        finally:
            stop(run)
        output.seek(0)
        text = output.read()
    assert "results [0, 10, 20]" in text and "program done" in text
    # Told in its own output that sessions wait, and where.
    assert "session %d paused" % first in text


def test_program_with_only_dpdb_hub_exported_reaches_the_hub(dpdb):
    """No `dpdb run`: PYTHONBREAKPOINT=dpdb.set_trace and the DPDB_HUB that `dpdb hub` says to
    export are enough (the agent finds the secret beside the socket, as the client does)."""
    hub = Hub(dpdb)
    env = dict(dpdb.env, PYTHONBREAKPOINT="dpdb.set_trace", **hub.env)
    program_run = subprocess.Popen([PYTHON, PROGRAM], env=env, cwd=dpdb.root,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        listing = dpdb.wait_ls(lambda listing: len(listing["sessions"]) == 1, env=hub.env)
        [paused] = listing["sessions"]
        assert paused["pid"] == program_run.pid
        user = dpdb.spawn("dpdb", "attach", env=hub.env)
        user.expect(r"attached to session %d: pid %d" % (paused["sid"], program_run.pid))
        user.expect(PROMPT)
        user.sendline("p first")
        user.expect("'first stop'")
        user.expect(PROMPT)
        user.sendline("c")
        user.expect("session %d continued" % paused["sid"])
        finish(user, 0)
        output, _ = program_run.communicate(timeout=30)
    finally:
        stop(program_run)
    assert program_run.returncode == 0 and "program done" in output, output
    assert "authentication failed" not in hub.log()


def frame(payload):
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return struct.pack(">I", len(data)) + data


def read_frame(sock):
    header = b""
    while len(header) < 4:
        more = sock.recv(4 - len(header))
        if not more:
            return None
        header += more
    size, = struct.unpack(">I", header)
    body = b""
    while len(body) < size:
        more = sock.recv(size - len(body))
        if not more:
            return None
        body += more
    return json.loads(body)


def open_connection(hub):
    """A raw connection to the hub and the challenge it opens with."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect(hub.path)
    challenge = read_frame(sock)
    assert challenge["t"] == "challenge"
    return sock, challenge


def say_hello(hub, sock, challenge, role, proc=None):
    """The hello of `role`, signed with this user's secret (as any of its processes could sign
    it); the hub's answer."""
    nonce = secrets.token_hex(16)
    text = "dpdb1|%s|%s|%s|" % (role, challenge["nonce"], nonce)
    mac = hmac.new(hub.secret().encode(), text.encode(), hashlib.sha256).hexdigest()
    hello = {"t": "hello", "v": challenge["v"], "role": role, "nonce": nonce, "mac": mac}
    if role == "agent":
        hello["proc"] = proc or {"pid": 999999, "ppid": 1, "argv": ["hostile"]}
    sock.sendall(frame(hello))
    return read_frame(sock)


def connect(hub, role=None):
    """A raw connection to the hub; with a role, past the handshake."""
    sock, challenge = open_connection(hub)
    if role:
        assert say_hello(hub, sock, challenge, role)["t"] == "welcome"
    return sock


def dropped(sock):
    """Whether the hub closed this connection (reading what it still sends first)."""
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


HOSTILE = {
    "garbage before the handshake": (None, b"\xde\xad\xbe\xef" + os.urandom(60)),
    "oversized frame before the handshake": (None, struct.pack(">I", 0x7FFFFFFF) + b"x" * 64),
    "frame that is not JSON": (None, frame(b"\xff{not json")),
    "oversized frame from a client": ("client", struct.pack(">I", (1 << 20) + 1) + b"{" * 4096),
    "unknown message from a client": ("client", frame({"t": "launch", "sid": 1})),
    "message with an extra field": ("client", frame({"t": "list", "id": 1, "extra": True})),
    "field of the wrong type": ("client", frame({"t": "attach", "sid": "1", "cols": 80})),
    "agent speaking for a client": ("agent", frame({"t": "session_open", "sid": 1, "info": {}})
                                    + frame({"t": "attach", "sid": 1, "cols": 80})),
    "zero-length frame from an agent": ("agent", struct.pack(">I", 0)),
    "deeply nested JSON": ("agent", frame(b'{"t":"proc_update","proc":' + b'{"a":' * 64
                                          + b'1' + b'}' * 64 + b'}')),
}


def test_hostile_input_does_not_disturb_a_session_in_progress(dpdb):
    hub = Hub(dpdb)
    with open(os.path.join(dpdb.root, "run.out"), "w+") as output:
        run = start_in_background(dpdb, hub, output=output)
        try:
            user = dpdb.spawn("dpdb", "attach", "--next", env=hub.env)
            user.expect(r"attached to session (\d+)")
            sid = int(user.match.group(1))
            user.expect(PROMPT)
            user.sendline("!history.append('before')")
            user.expect(PROMPT)
            log_before = hub.log().count("\n")

            for name, (role, data) in HOSTILE.items():
                sock = connect(hub, role)
                try:
                    sock.sendall(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                assert dropped(sock), name
                sock.close()
                # The session goes on, answering as before.
                user.sendline("p len(history), %r" % name)
                user.expect(r"\(1, %r\)" % name)
                user.expect(PROMPT)

            # Each hostile connection cost one line of log, no more.
            def logged():
                return hub.log().count("\n") - log_before
            wait_until(lambda: logged() >= len(HOSTILE), "the hub's log lines")
            new_lines = hub.log().split("\n")[log_before:-1]
            assert len(new_lines) == len(HOSTILE), "\n".join(new_lines)
            assert all("dpdb hub:" in line for line in new_lines), "\n".join(new_lines)

            # Others are still served: a listing, and the session to its end.
            listing = dpdb.ls(env=hub.env)
            assert [s["sid"] for s in listing["sessions"]] == [sid]
            assert 999999 not in [p["pid"] for p in listing["processes"]]
            user.sendline("!history.clear()")
            user.expect(PROMPT)
            user.sendline("c")
            user.expect("session %d continued" % sid)
            finish(user, 0)
            assert run.wait(timeout=30) == 0
        finally:
            stop(run)
        output.seek(0)
        assert "program done" in output.read()
    assert hub.child.isalive()


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
def test_hub_stops_on_signal_and_removes_its_socket(dpdb, how):
    hub = Hub(dpdb)
    assert os.path.exists(hub.path)
    hub.child.kill(getattr(signal, how))
    hub.child.expect(pexpect.EOF)
    hub.child.close()
    assert hub.child.exitstatus == 0
    assert not os.path.exists(hub.path)
    done = dpdb.run("dpdb", "ls", env=hub.env)
    assert done.returncode != 0 and hub.path in done.stderr


def test_default_hub_is_found_in_the_runtime_directory(dpdb):
    hub = dpdb.spawn("dpdb", "hub")
    hub.expect(r"dpdb hub listening on unix:(\S+)\r\n")
    path = hub.match.group(1)
    assert os.path.dirname(path) == os.path.join(dpdb.env["XDG_RUNTIME_DIR"],
                                                 "dpdb-%d" % os.getuid())
    assert "DPDB_HUB" not in dpdb.env
    assert dpdb.ls() == {"processes": [], "sessions": []}


def test_runs_joining_one_hub_each_follow_their_own_program(dpdb):
    hub = Hub(dpdb)
    runs = [dpdb.spawn("dpdb", "run", PROGRAM, env=hub.env) for _ in range(2)]
    pids = []
    for run in runs:
        attached, main = expect_all(run, r"attached to session (\d+): pid (\d+)",
                                    r"main pid (\d+)\r\n")
        assert attached.group(2) == main.group(1)  # its own program's session, not the other's
        pids.append(int(main.group(1)))
        run.expect(PROMPT)
    assert pids[0] != pids[1]
    listing = dpdb.ls(env=hub.env)
    assert sorted(s["pid"] for s in listing["sessions"]) == sorted(pids)
    for run in runs:
        run.sendline("c")
        expect_all(run, r"results \[0, 10, 20\]", "program done")
        finish(run, 0)
    assert hub.child.isalive()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="a pid namespace of its own for each run needs root and unshare")
def test_runs_of_the_same_pid_on_one_hub_each_hear_only_their_own(dpdb):
    """Two `dpdb run` that share a pid, as on two hosts joined to one hub (here each is pid 1 of a
    pid namespace of its own): each console hears only its own program's sessions."""
    hub = Hub(dpdb)
    runs, sids = [], []
    for _ in range(2):
        run = dpdb.spawn("unshare", "--pid", "--fork", DPDB, "run", PROGRAM, env=hub.env)
        run.expect(r"attached to session (\d+): ")
        sids.append(run.match.group(1))
        run.expect(PROMPT)
        runs.append(run)
    assert sids[0] != sids[1]
    # The first console was at its prompt when the second program paused: a round trip there
    # comes after any event the hub sent it about that pause.
    runs[0].sendline("p first")
    runs[0].expect(r"'first stop'")
    runs[0].expect(PROMPT)
    runs[0].sendline("sessions")
    runs[0].expect(r"SESSION [^\r\n]*\r\n")
    runs[0].expect(PROMPT)
    assert [row.split()[0] for row in runs[0].before.splitlines() if row[:1].isdigit()] == [sids[0]]
    assert "session %s paused" % sids[1] not in runs[0].logfile_read.getvalue()
    for run in runs:
        run.sendline("c")
        expect_all(run, r"results \[0, 10, 20\]", "program done")
        finish(run, 0)


def test_hub_restart_gets_the_paused_session_back(dpdb):
    """The agent reconnects to a hub that restarts (same socket, same secret from its state
    directory) and re-opens the session that still waits."""
    state = os.path.join(dpdb.root, "state")
    hub = Hub(dpdb, "--state-dir", state)
    env = dict(dpdb.env, PYTHONBREAKPOINT="dpdb.set_trace", **hub.env)
    program_run = subprocess.Popen([PYTHON, PROGRAM], env=env, cwd=dpdb.root,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        dpdb.wait_ls(lambda listing: len(listing["sessions"]) == 1, env=hub.env)
        hub.child.kill(signal.SIGTERM)
        hub.child.expect(pexpect.EOF)
        again = Hub(dpdb, "--state-dir", state)
        listing = dpdb.wait_ls(lambda listing: len(listing["sessions"]) == 1, env=again.env)
        assert listing["sessions"][0]["pid"] == program_run.pid
        user = dpdb.spawn("dpdb", "attach", env=again.env)
        user.expect(r"attached to session \d+: pid %d" % program_run.pid)
        user.expect(PROMPT)
        user.sendline("p first")
        user.expect("'first stop'")
        user.expect(PROMPT)
        user.sendline("c")
        user.expect("continued")
        finish(user, 0)
        output, _ = program_run.communicate(timeout=30)
    finally:
        stop(program_run)
    assert program_run.returncode == 0 and "program done" in output, output
