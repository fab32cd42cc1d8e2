"""One authenticated port for a whole cluster: the hub on TCP with TLS, agents and clients that
dial it with the secret, refusals, restarts, and two hosts joined by a network."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid

import pexpect
import pytest

from conftest import DPDB, PROMPT, finish, program, wait_until


class StandaloneHub:
    """`dpdb hub` as a user runs it, in the background; its printed addresses parsed."""

    def __init__(self, dpdb, *args, prefix=()):
        self.dpdb = dpdb
        self.args = args
        self.prefix = list(prefix)
        self.state = os.path.join(dpdb.root, "state")
        self.log = os.path.join(dpdb.root, "hub-%d.log" % len(os.listdir(dpdb.root)))
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            self.prefix + [DPDB, "hub", "--state-dir", self.state, *self.args],
            env=self.dpdb.env, stdout=subprocess.PIPE, stderr=open(self.log, "w"), text=True,
            stdin=subprocess.DEVNULL)
        banner = []
        deadline = time.monotonic() + 20
        while not any(line.startswith("  export DPDB_HUB") for line in banner):
            line = self.process.stdout.readline()
            assert line, "the hub ended early: %s" % open(self.log).read()
            banner.append(line)
            assert time.monotonic() < deadline
        text = "".join(banner)
        self.tcp = re.search(r"(tcp://\S+)", text).group(1)
        self.fingerprint = re.search(r"certificate (sha256:[0-9a-f]+)", text)
        self.fingerprint = self.fingerprint.group(1) if self.fingerprint else None
        self.secret_file = os.path.join(self.state, "secret")

    def stop(self, sig=signal.SIGTERM):
        self.process.send_signal(sig)
        self.process.wait(timeout=10)

    def logged(self):
        with open(self.log) as f:
            return f.read()

    def env(self, **extra):
        """What an agent or client on another machine is given: address and secret file."""
        env = {"DPDB_HUB": self.tcp, "DPDB_TOKEN_FILE": self.secret_file}
        env.update(extra)
        return env


@pytest.fixture
def tcp_hub(dpdb):
    hub = StandaloneHub(dpdb, "--listen", "127.0.0.1:0")
    yield hub
    if hub.process.poll() is None:
        hub.stop()


@pytest.fixture
def jobs():
    """Jobs started by a test; whatever is left of them (paused workers too) ends with it."""
    started = []
    yield started
    for job in started:
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        job.wait(timeout=10)


def start_job(dpdb, env, jobs, name="ranks.py"):
    """The job under `dpdb run` joining the hub, in the background with no terminal, in a
    process group of its own."""
    job = subprocess.Popen([DPDB, "run", program(name)], env=dict(dpdb.env, **env),
                           cwd=dpdb.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    jobs.append(job)
    return job


def look_and_finish(client, job, command, answer):
    """At the attached prompt: one command and its answer, then `c`; the job then completes."""
    client.expect(PROMPT)
    client.sendline(command)
    client.expect(answer)
    client.expect(PROMPT)
    client.sendline("c")
    finish(client)
    output, _ = job.communicate(timeout=30)
    assert job.returncode == 0 and "job done" in output, output
    return output


def paused_sessions(dpdb, env):
    return dpdb.wait_ls(lambda listing: listing["sessions"], env=env)["sessions"]


def test_job_and_client_meet_through_tls_with_the_secret(dpdb, tcp_hub, jobs):
    env = tcp_hub.env(DPDB_TLS_FINGERPRINT=tcp_hub.fingerprint)
    job = start_job(dpdb, env, jobs)
    session = paused_sessions(dpdb, env)[0]
    assert session["tags"] == {"RANK": "1", "WORLD_SIZE": "2"}
    client = dpdb.spawn("dpdb", "attach", env=env)
    client.expect(r"attached to session %d" % session["sid"])
    output = look_and_finish(client, job, "p rank, loss", r"\(1, 0\.5\)")
    assert "losses [(0, 1.0), (1, 0.5)]" in output


def test_wrong_secret_is_refused_in_one_line_and_logged(dpdb, tcp_hub):
    done = dpdb.run("dpdb", "ls", env={"DPDB_HUB": tcp_hub.tcp, "DPDB_TOKEN": "0" * 64})
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "refused the connection: authentication failed" in done.stderr
    wait_until(lambda: "authentication failed" in tcp_hub.logged(), "the hub's log line")
    assert "0" * 64 not in tcp_hub.logged()


def test_pinned_fingerprint_must_match(dpdb, tcp_hub):
    done = dpdb.run("dpdb", "ls", env=tcp_hub.env(DPDB_TLS_FINGERPRINT="sha256:" + "ab" * 32))
    assert done.returncode != 0
    assert "not the pinned sha256:abab" in done.stderr


def test_tcp_is_tls_unless_insecure(dpdb, tcp_hub):
    done = dpdb.run("dpdb", "ls", env=tcp_hub.env(DPDB_INSECURE="1"), timeout=40)
    assert done.returncode != 0


def test_hub_restart_brings_paused_sessions_back(dpdb, tcp_hub, jobs):
    env = tcp_hub.env()
    job = start_job(dpdb, env, jobs)
    before = paused_sessions(dpdb, env)[0]
    tcp_hub.stop(signal.SIGKILL)
    port = tcp_hub.tcp.rsplit(":", 1)[1]
    tcp_hub.args = ("--listen", "127.0.0.1:" + port)
    tcp_hub.start()
    after = paused_sessions(dpdb, env)[0]
    assert (after["pid"], after["line"], after["file"]) == (before["pid"], before["line"],
                                                           before["file"])
    client = dpdb.spawn("dpdb", "attach", env=env)
    look_and_finish(client, job, "p loss", r"0\.5")


def test_client_of_a_dead_hub_says_so_and_waits_for_it(dpdb, tcp_hub, jobs):
    env = tcp_hub.env()
    job = start_job(dpdb, env, jobs)
    paused_sessions(dpdb, env)
    client = dpdb.spawn("dpdb", "attach", env=env)
    client.expect(PROMPT)
    tcp_hub.stop(signal.SIGKILL)
    client.expect(r"lost the hub")
    client.expect(r"waiting for the hub to come back; attaching again then \(Ctrl-C stops\)")
    client.sendintr()
    client.expect(pexpect.EOF)
    client.close()
    assert client.signalstatus == signal.SIGINT or client.exitstatus == 130


# --- two hosts ---------------------------------------------------------------------------------


def _can_make_namespaces():
    if os.geteuid() != 0 or not shutil.which("ip"):
        return False
    probe = "dpdbprobe%d" % os.getpid()
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode == 0
    if made:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return made


@pytest.fixture
def two_hosts():
    """A "login host" and a "node" as network namespaces joined by a veth pair (10.231.7.0/30)."""
    if not _can_make_namespaces():
        pytest.skip("needs root and `ip netns` to create network namespaces")
    tag = uuid.uuid4().hex[:6]
    login, node = "dpdb-login-" + tag, "dpdb-node-" + tag
    commands = [
        ["ip", "netns", "add", login],
        ["ip", "netns", "add", node],
        ["ip", "link", "add", "dl" + tag, "type", "veth", "peer", "name", "dn" + tag],
        ["ip", "link", "set", "dl" + tag, "netns", login],
        ["ip", "link", "set", "dn" + tag, "netns", node],
        ["ip", "-n", login, "addr", "add", "10.231.7.1/30", "dev", "dl" + tag],
        ["ip", "-n", node, "addr", "add", "10.231.7.2/30", "dev", "dn" + tag],
        ["ip", "-n", login, "link", "set", "dl" + tag, "up"],
        ["ip", "-n", node, "link", "set", "dn" + tag, "up"],
        ["ip", "-n", login, "link", "set", "lo", "up"],
        ["ip", "-n", node, "link", "set", "lo", "up"],
    ]
    try:
        for command in commands:
            subprocess.run(command, check=True, capture_output=True)
        yield login, node
    finally:
        subprocess.run(["ip", "netns", "del", login], capture_output=True)
        subprocess.run(["ip", "netns", "del", node], capture_output=True)


def start_on_node(dpdb, node, env, jobs):  # noqa: F811 (the fixture's list)
    """`dpdb run ranks.py` on the node, with a runtime directory of its own: nothing is shared
    with the hub's host but the network and the secret."""
    node_env = dict(dpdb.env, XDG_RUNTIME_DIR=os.path.join(dpdb.root, "node-run"), **env)
    os.makedirs(node_env["XDG_RUNTIME_DIR"], mode=0o700)
    job = subprocess.Popen(["ip", "netns", "exec", node, DPDB, "run", program("ranks.py")],
                           env=node_env, cwd=dpdb.root, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    jobs.append(job)
    return job


def test_two_hosts_attach_through_tcp_tls_and_auth(dpdb, two_hosts, jobs):
    login, node = two_hosts
    hub = StandaloneHub(dpdb, "--listen", "10.231.7.1:0", prefix=["ip", "netns", "exec", login])
    try:
        env = hub.env(DPDB_TLS_FINGERPRINT=hub.fingerprint)
        job = start_on_node(dpdb, node, env, jobs)
        ls = lambda: json.loads(subprocess.run(
            ["ip", "netns", "exec", login, DPDB, "ls", "--json"], env=dict(dpdb.env, **env),
            capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL).stdout or "{}")
        wait_until(lambda: ls().get("sessions"), "a paused session from the node")
        client = pexpect.spawn("ip", ["netns", "exec", login, DPDB, "attach"],
                               env=dict(dpdb.env, **env), encoding="utf-8", timeout=30,
                               dimensions=(50, 200))
        client.expect(r"attached to session \d+: pid \d+ \[rank=1,world_size=2\]")
        look_and_finish(client, job, "p rank", r"\r\n1\r\n")
    finally:
        if hub.process.poll() is None:
            hub.stop()


def test_global_breakpoints_and_exit_records_survive_a_hub_restart(dpdb, tcp_hub):
    env = tcp_hub.env()
    added = dpdb.run("dpdb", "break", "ranks.py:11", env=env)
    assert added.returncode == 0, added.stderr
    ended = subprocess.run(
        [sys.executable, "-c", "from dpdb import _process; _process.ensure_link(); exit(7)"],
        env=dict(dpdb.env, **env), timeout=30, stdin=subprocess.DEVNULL)
    assert ended.returncode == 7
    tcp_hub.stop()
    tcp_hub.args = ("--listen", "127.0.0.1:" + tcp_hub.tcp.rsplit(":", 1)[1])
    tcp_hub.start()
    listing = dpdb.run("dpdb", "break", "--list", env=env).stdout
    assert re.search(r"^1\s+ranks.py:11", listing, re.M), listing
    processes = json.loads(dpdb.run("dpdb", "ps", "--json", env=env).stdout)
    assert any(p["state"] == "exited with status 7" for p in processes), processes


def test_a_connection_flood_does_not_shut_out_others(dpdb, tcp_hub):
    import socket

    host, port = tcp_hub.tcp[len("tcp://"):].rsplit(":", 1)
    flood = []
    try:
        # 64 connections that never speak, from another loopback address.
        for _ in range(64):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.connect((host, int(port)))
            flood.append(s)
        done = dpdb.run("dpdb", "ls", env=tcp_hub.env())
        assert done.returncode == 0, done.stderr
    finally:
        for s in flood:
            s.close()
