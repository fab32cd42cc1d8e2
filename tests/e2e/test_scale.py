"""A job larger than a screen and a frame: a standalone hub with a crowd of agents (real protocol
clients, each describing a process of a training job across hosts, a few of them paused), more
than `dpdb ls` lists one by one and more than one frame holds. `dpdb ls` sums them up by host,
tags and state; `--all`, `--json` and `dpdb ps --json` list every one; `dpdb stacks` shows the
processes that stand in the same place once."""

import hashlib
import hmac
import json
import re
import secrets
import socket
import threading

import pytest

from conftest import plain, wait_until
from test_hub import Hub, frame, read_frame

AGENTS = 300
HOSTS = 5
PAUSED = 12
# Each process describes itself in about 4 KB (a long command line): 300 of them make a listing
# larger than a frame (1 MiB), in several pages (256 KiB each).
ARGV_PADDING = "x" * 4000


class Crowd:
    """AGENTS connections to the hub, each past the handshake as an agent and describing a
    process; the first PAUSED of them with a paused session. No Python process behind them."""

    def __init__(self, hub):
        self.sockets = []
        secret = hub.secret().encode()
        for i in range(AGENTS):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sockets.append(sock)
            sock.settimeout(20)
            sock.connect(hub.path)
            challenge = read_frame(sock)
            assert challenge["t"] == "challenge"
            nonce = secrets.token_hex(16)
            text = "dpdb1|agent|%s|%s|" % (challenge["nonce"], nonce)
            mac = hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()
            proc = {"pid": 700000 + i, "ppid": 1, "host": "e2e-node%d" % (i % HOSTS),
                    "argv": ["python", "train.py", "--pad", ARGV_PADDING, "--rank", str(i)],
                    "python": "3.12.1",
                    "tags": {"RANK": str(i), "WORLD_SIZE": str(AGENTS),
                             "role": "loader" if i % 50 == 0 else "trainer"}}
            sock.sendall(frame({"t": "hello", "v": challenge["v"], "role": "agent",
                                "nonce": nonce, "mac": mac, "proc": proc}))
            assert read_frame(sock)["t"] == "welcome"
            if i < PAUSED:
                sock.sendall(frame({"t": "session_open", "sid": 1, "info": {
                    "thread": "MainThread", "tid": 1, "file": "/srv/job/train.py",
                    "line": 42, "function": "step"}}))

    def answer_stacks(self, stacks_of):
        """Answers the hub's next stacks request on every agent i for which stacks_of(i) gives a
        text (None: that agent stays silent)."""
        for i, sock in enumerate(self.sockets):
            text = stacks_of(i)
            if text is None:
                continue
            while True:
                request = read_frame(sock)
                assert request is not None, "agent %d lost the hub" % i
                if request["t"] == "stacks_request":
                    break
            sock.sendall(frame({"t": "stacks_reply", "req": request["req"],
                                "stacks": {"threads": [], "text": text}}))

    def close(self):
        for sock in self.sockets:
            sock.close()


@pytest.fixture
def crowd(dpdb):
    hub = Hub(dpdb)
    crowd = Crowd(hub)
    try:
        # The agents reach the hub on connections of their own: wait until it has them all.
        def complete():
            listing = dpdb.ls(env=hub.env)
            return len(listing["processes"]) == AGENTS and len(listing["sessions"]) == PAUSED
        wait_until(complete, "the hub to have every agent and session")
        hub.agents = crowd
        yield hub
    finally:
        crowd.close()


def test_ls_sums_up_a_large_job_by_host_tags_and_state(dpdb, crowd):
    done = dpdb.run("dpdb", "ls", env=crowd.env)
    assert done.returncode == 0, done.stderr
    text = plain(done.stdout)
    lines = text.split("\n")
    assert lines[0] == "%d processes on %d hosts, %d paused sessions (0 attached)" % (
        AGENTS, HOSTS, PAUSED), text
    assert "`dpdb ls --all`" in lines[1]
    header = lines.index(next(l for l in lines if l.startswith("HOST")))
    assert lines[header].split() == ["HOST", "STATE", "PROCESSES", "SESSIONS", "TAGS"]
    rows = []
    for line in lines[header + 1:]:
        if not line.strip():
            break
        rows.append(line.split())
    # A row per host, role and state: every process counted once.
    assert sum(int(row[2]) for row in rows) == AGENTS, text
    paused = [row for row in rows if row[1] == "paused"]
    assert sum(int(row[3]) for row in paused) == PAUSED, text
    # Shared tags as they are; the rank, which tells processes apart, as a span.
    node0_trainers = next(row for row in rows if row[0] == "e2e-node0" and row[1] == "running"
                          and "role=trainer" in row)
    assert "world_size=%d" % AGENTS in node0_trainers, node0_trainers
    rank = next(tag for tag in node0_trainers if tag.startswith("rank="))
    assert re.fullmatch(r"rank=[0-9,\-…() a-z]+", rank), rank
    # Where the sessions are paused, and each of them (there are few enough).
    assert re.search(r"^train\.py:42 in step\(\)\s+%d\s+0$" % PAUSED, text, re.M), text
    sessions = lines.index(next(l for l in lines if l.startswith("SESSION")))
    listed = [l.split()[1] for l in lines[sessions + 1:] if l.strip()]
    assert sorted(map(int, listed)) == [700000 + i for i in range(PAUSED)], text
    # No line per process.
    assert len(lines) < 60, text


def test_ls_all_and_json_list_every_process(dpdb, crowd):
    done = dpdb.run("dpdb", "ls", "--all", env=crowd.env)
    assert done.returncode == 0, done.stderr
    text = plain(done.stdout)
    assert text.startswith("%d process(es), %d paused session(s)\n" % (AGENTS, PAUSED)), text
    for i in range(AGENTS):
        assert re.search(r"^%d\s" % (700000 + i), text, re.M), "pid %d missing" % (700000 + i)

    listing = dpdb.ls(env=crowd.env)
    assert sorted(p["pid"] for p in listing["processes"]) == [700000 + i for i in range(AGENTS)]
    # Nothing was cut to fit a frame: each description is whole.
    assert all(p["argv"][3] == ARGV_PADDING for p in listing["processes"])
    assert all(not p.get("truncated") for p in listing["processes"])
    assert sorted(s["pid"] for s in listing["sessions"]) == [700000 + i for i in range(PAUSED)]
    assert len({s["sid"] for s in listing["sessions"]}) == PAUSED
    # The listing really was larger than a frame.
    assert len(json.dumps(listing["processes"])) > 1 << 20

    ps = dpdb.run("dpdb", "ps", "--json", env=crowd.env)
    assert ps.returncode == 0, ps.stderr
    processes = json.loads(ps.stdout)
    assert len([p for p in processes if not p.get("exited")]) == AGENTS
    assert sum(1 for p in processes if p["state"].startswith("paused")) == PAUSED


def test_stacks_of_a_large_job_show_each_place_once(dpdb, crowd):
    agents = crowd.agents

    def stacks_of(i):
        if i % 100 == 99:
            return None  # never answers
        where = "line 7, in load" if i % 100 == 0 else "line 42, in step"
        # Thread ids differ in every process; the places are what the groups are made of.
        return ("  Thread MainThread (%d, native %d), most recent call last:\n"
                '    File "/srv/job/train.py", %s' % (140000000 + i, 5000 + i, where))

    answering = threading.Thread(target=agents.answer_stacks, args=(stacks_of,))
    answering.start()
    try:
        done = dpdb.run("dpdb", "stacks", env=crowd.env)
    finally:
        answering.join(timeout=30)
    assert done.returncode == 0, done.stderr
    text = plain(done.stdout)
    blocks = text.strip().split("\n\n")
    # Most processes stand in step(), a few in load(), and a few did not answer: three blocks.
    assert len(blocks) == 3, text
    step, load, silent = blocks
    trainers = AGENTS - AGENTS // 100 * 2
    assert step.startswith("%d processes, pids 700001-700098," % trainers), step
    assert step.split("\n")[1:] == ["  Thread MainThread, most recent call last:",
                                    '    File "/srv/job/train.py", line 42, in step'], step
    assert load.startswith("%d processes, pids 700000,700100,700200 [" % (AGENTS // 100)), load
    assert "rank=0,100,200" in load and "role=loader" in load, load
    assert silent.startswith("%d processes, pids 700099,700199,700299" % (AGENTS // 100)), silent
    assert silent.endswith(": no answer within 1 s"), silent

    # --json still has every process, each with its own stacks.
    answering = threading.Thread(target=agents.answer_stacks, args=(stacks_of,))
    answering.start()
    try:
        done = dpdb.run("dpdb", "stacks", "--json", env=crowd.env)
    finally:
        answering.join(timeout=30)
    processes = json.loads(done.stdout)
    assert len(processes) == AGENTS
    assert sum(1 for p in processes if "error" in p) == AGENTS // 100
