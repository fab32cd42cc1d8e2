"""The one port against strangers who do not hold the secret: connections that never
authenticate cannot lock anybody out, cannot flood the hub's log, and cannot write escape
sequences into it."""

import json
import os
import socket
import ssl
import struct
import time

import pytest

from conftest import finish, program, wait_until
from test_remote import StandaloneHub

# Thousands of connections keep both cores busy: run alone (dev/test), not beside other tests.
pytestmark = pytest.mark.alone

# The README's bound: what strangers can make the hub log in a minute.
LOG_BOUND = 64 * 1024


@pytest.fixture
def tcp_hub(dpdb):
    hub = StandaloneHub(dpdb, "--listen", "127.0.0.1:0")
    yield hub
    if hub.process.poll() is None:
        hub.stop()


def port_of(hub):
    return int(hub.tcp.rsplit(":", 1)[1])


def stranger(hub, source="127.0.0.1"):
    """A TLS connection from `source` (any 127/8 address is this host's) that has read the
    hub's challenge and knows no secret."""
    raw = socket.create_connection(("127.0.0.1", port_of(hub)), timeout=10,
                                   source_address=(source, 0))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    conn = context.wrap_socket(raw, server_hostname="dpdb-hub")
    message = read_frame(conn)
    if message["t"] != "challenge":
        conn.close()
        raise Refused(message.get("reason"))
    return conn


class Refused(Exception):
    pass


def read_frame(conn):
    header = b""
    while len(header) < 4:
        chunk = conn.recv(4 - len(header))
        if not chunk:
            raise ConnectionError("closed")
        header += chunk
    (size,) = struct.unpack(">I", header)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    return json.loads(body)


def send_frame(conn, payload):
    conn.sendall(struct.pack(">I", len(payload)) + payload)


def accept_queue(port):
    """How many connections to the listening socket on `port` wait for the hub's accept()
    (/proc/net/tcp: a listening socket's rx_queue is its accept queue)."""
    with open("/proc/net/tcp") as table:
        for row in table.readlines()[1:]:
            fields = row.split()
            local, state, queues = fields[1], fields[3], fields[4]
            if state == "0A" and int(local.split(":")[1], 16) == port:
                return int(queues.split(":")[1], 16)
    raise AssertionError("nothing listens on port %d" % port)


def ls(dpdb, hub, timeout=10):
    return dpdb.run("dpdb", "ls", "--json", env=hub.env(), timeout=timeout)


def test_a_thousand_strangers_lock_nobody_out(dpdb, tcp_hub):
    for i in range(1000):
        conn = stranger(tcp_hub, "127.0.0.%d" % (10 + i % 10))
        if i % 3 == 0:
            conn.close()  # closed cleanly
        else:
            # reset: the hub never reads a TLS close_notify
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
    # Served: the hub holds no stale place for any of them (each had its challenge, so each was
    # taken; one still held would count against its address, and 100 a place against the owner).
    done = ls(dpdb, tcp_hub)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["processes"] == []


def test_connections_held_from_many_addresses_leave_the_owner_served_every_time(dpdb, tcp_hub):
    # 300 connections that never authenticate, from 16 addresses (the owner's among them, as
    # behind a shared NAT or `ssh -L`): more than the 256 places. Once they have had the grace
    # a connection gets to authenticate (2 s), the oldest make room, and the owner, who proves
    # the secret at once, is served.
    # Plain TCP connections that never start TLS: each holds its place until the handshake
    # deadline, and 300 of them are made in far less time than that.
    held = []
    try:
        for i in range(300):
            source = "127.0.0.1" if i % 16 == 0 else "127.0.5.%d" % (i % 16)
            held.append(socket.create_connection(("127.0.0.1", port_of(tcp_hub)), timeout=10,
                                                 source_address=(source, 0)))
        # The grace counts from when the hub took each connection, which a loaded machine
        # delays past the client's connect(): the listening socket's queue empties first.
        wait_until(lambda: accept_queue(port_of(tcp_hub)) == 0, "the hub took all 300")
        time.sleep(2.5)  # the strangers' grace (Admission::Limits::grace), not a retry
        for attempt in range(5):
            done = ls(dpdb, tcp_hub)
            assert done.returncode == 0, (attempt, done.stderr)
    finally:
        for conn in held:
            conn.close()


def test_failed_handshakes_from_the_owners_address_do_not_lock_the_owner_out(dpdb, tcp_hub):
    bad = {"DPDB_HUB": tcp_hub.tcp, "DPDB_TOKEN": "f" * 64}
    for attempt in range(20):
        failed = dpdb.run("dpdb", "ls", env=bad)
        assert failed.returncode != 0 and "authentication failed" in failed.stderr
        if attempt % 2:
            done = ls(dpdb, tcp_hub)
            assert done.returncode == 0, (attempt, done.stderr)
    # A TLS handshake that fails counts as a failure of its address too (logged as one).
    raw = socket.create_connection(("127.0.0.1", port_of(tcp_hub)), timeout=10)
    raw.sendall(b"\x16\x03\x01\x00\x05garbage")
    raw.close()
    assert ls(dpdb, tcp_hub).returncode == 0


def test_a_flood_of_refused_frames_leaves_the_log_bounded(dpdb, tcp_hub):
    before = len(tcp_hub.logged())
    big = b'{"t":"' + b"x" * ((1 << 20) - 64) + b'"}'
    for i in range(128):
        conn = stranger(tcp_hub, "127.0.2.%d" % (1 + i % 16))
        try:
            send_frame(conn, big)
            conn.recv(64)
        except (ConnectionError, OSError, ssl.SSLError):
            pass
        conn.close()
    # The hub is still there and serves its own.
    done = ls(dpdb, tcp_hub)
    assert done.returncode == 0, done.stderr
    grown = len(tcp_hub.logged()) - before
    assert grown < LOG_BOUND, tcp_hub.logged()[-4000:]


def test_escape_sequences_from_a_stranger_reach_the_log_escaped(dpdb, tcp_hub):
    conn = stranger(tcp_hub, "127.0.3.1")
    forged = ("\x1b]0;owned\x07\x1b[2K\r2030-01-01 00:00:00 dpdb hub: forged line\n"
              "\x1b]52;c;aGVsbG8=\x07")
    hello = {"t": "hello", "v": 1, "role": forged, "nonce": "00" * 16, "mac": "00" * 32}
    send_frame(conn, json.dumps(hello).encode())
    answer = read_frame(conn)
    assert answer["t"] == "refused"
    conn.close()
    deadline = time.monotonic() + 10
    while "unknown role" not in tcp_hub.logged() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = tcp_hub.logged()
    assert "unknown role" in log, log
    assert "\x1b" not in log and "\x07" not in log and "\r" not in log
    assert r"\x1b]0;owned\x07\x1b[2K\r2030-01-01 00:00:00 dpdb hub: forged line\n" in log
    assert not any(line.startswith("2030-01-01") for line in log.splitlines())


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
def test_workers_that_drop_privileges_carry_no_secret_that_attaches(dpdb):
    run = dpdb.spawn("dpdb", "run", program("dropper.py"), env={"DPDB_WAIT": "continue:1"})
    run.expect(r"helper pid (\d+)")
    helper = int(run.match.group(1))
    # What the other user can read: the environment of the process started as that user.
    with open("/proc/%d/environ" % helper, "rb") as f:
        environ = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
    assert b"DPDB_TOKEN" not in environ and b"DPDB_TOKEN_FILE" not in environ
    assert b"DPDB_AGENT_KEY" in environ
    hub = environ[b"DPDB_HUB"].decode()
    # Each value tried as the secret of a client (here with access to the socket, which that
    # user does not even have): refused.
    for value in environ.values():
        done = dpdb.run("dpdb", "ls", env={"DPDB_HUB": hub, "DPDB_TOKEN": value.decode()})
        assert done.returncode != 0
        assert "authentication failed" in done.stderr, done.stderr
    # A process forked by that user cannot reach the hub's socket: it says so in one line, and
    # runs on.
    run.expect(r"worker uid (\d+)")
    uid = int(run.match.group(1))
    run.expect(r"dpdb: not debugging this process \(pid \d+, uid %d\): the hub at unix:\S+ "
               r"is not open to it \(Permission denied\)" % uid)
    run.expect("grandchild done")
    run.expect("grandchild status 0")
    # The worker that switched user after the fork keeps its connection (made before the switch)
    # and stops at its breakpoint in a dpdb session like any worker.
    run.expect(r"attached to session \d+: pid \d+")
    run.expect(r"\(Pdb\) ")
    run.sendline("p os.getuid()")
    run.expect(r"\b%d\b" % uid)
    run.sendline("c")
    run.expect("worker done")
    run.expect("server done, worker status 0")
    finish(run)
