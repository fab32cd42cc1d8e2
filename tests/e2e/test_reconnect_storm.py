"""A hub restart with a crowd of agents on one address (a cluster behind one NAT, `ssh -L` or a
port-forward): every agent redials at once, as real agents do (backoff from 50 ms to 2 s, with
jitter), and the hub takes every one of them back — its places for unauthenticated connections
are for strangers, and an agent that proves its key within a round trip is never turned away."""

import asyncio
import hashlib
import hmac
import json
import random
import resource
import secrets
import socket
import struct
import sys
import time

import pytest

from test_remote import StandaloneHub

AGENTS = 10000
BOUND = 120  # seconds: what a test waits at most; the time taken is printed (docs/performance)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def read_frame(reader):
    (size,) = struct.unpack(">I", await reader.readexactly(4))
    return json.loads(await reader.readexactly(size))


def frame(message):
    data = json.dumps(message).encode()
    return struct.pack(">I", len(data)) + data


async def join(port, key, i, writers):
    """One agent: dials until its handshake is through (an evicted or refused attempt is
    retried as the agent's link retries), then keeps its connection in `writers`."""
    delay = 0.05
    while True:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            challenge = await read_frame(reader)
            nonce = secrets.token_hex(16)
            text = "dpdb1|agent|%s|%s|" % (challenge["nonce"], nonce)
            mac = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
            writer.write(frame({"t": "hello", "v": challenge["v"], "role": "agent",
                                "nonce": nonce, "mac": mac,
                                "proc": {"pid": 800000 + i, "host": "node%d" % (i % 50)}}))
            if (await read_frame(reader))["t"] == "welcome":
                writers.append(writer)
                return
            writer.close()
        except (OSError, asyncio.IncompleteReadError):
            pass
        await asyncio.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 2, 2.0)


async def crowd(port, key, writers):
    started = time.monotonic()
    await asyncio.wait_for(
        asyncio.gather(*(join(port, key, i, writers) for i in range(AGENTS))), BOUND)
    return time.monotonic() - started


def listed(dpdb):
    """How many processes the hub lists, asked on its Unix socket (found as a user's local hub)."""
    done = dpdb.run("dpdb", "ls", "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    return len(json.loads(done.stdout)["processes"])


# The hub is C++ and the agents are played by this test: nothing here depends on the
# interpreter, and a minute is enough to spend once per CI run (README, "which suite runs where").
@pytest.mark.skipif(sys.version_info[:2] != (3, 12), reason="runs on 3.12 only (the hub's own)")
def test_ten_thousand_agents_from_one_address_are_all_back_after_a_hub_restart(dpdb):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 3 * AGENTS), hard))
    port = free_port()
    hub = StandaloneHub(dpdb, "--listen", "127.0.0.1:%d" % port, "--insecure")
    with open(hub.secret_file) as f:
        secret = f.read().strip()
    # The agent key, as `dpdb run` gives its processes (wire/auth: HMAC(secret, "dpdb1|agent-key")).
    key = hmac.new(secret.encode(), b"dpdb1|agent-key", hashlib.sha256).hexdigest().encode()
    writers = []
    loop = asyncio.new_event_loop()
    try:
        first = loop.run_until_complete(crowd(port, key, writers))
        assert listed(dpdb) == AGENTS
        hub.stop()
        for writer in writers:
            writer.close()
        writers.clear()
        hub.start()
        again = loop.run_until_complete(crowd(port, key, writers))
        assert listed(dpdb) == AGENTS
        print("%d agents from one address: %.1f s at first, %.1f s after a restart"
              % (AGENTS, first, again))
    finally:
        for writer in writers:
            writer.close()
        loop.close()
        if hub.process.poll() is None:
            hub.stop()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
