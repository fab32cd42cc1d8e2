"""A hub restart with a crowd of agents on one address (a cluster behind one NAT, `ssh -L` or a
port-forward): every agent redials at once, as real agents do (backoff from 50 ms to 2 s, with
jitter), and the hub takes every one of them back — its places for unauthenticated connections
are for strangers, and an agent that proves its key within a round trip is never turned away."""

import hashlib
import hmac
import json
import os
import socket
import subprocess
import sys

import pytest

from test_remote import StandaloneHub

# Thousands of connections keep both cores busy: run alone (dev/test), not beside other tests.
pytestmark = pytest.mark.alone

AGENTS = 10000
BOUND = 300  # seconds: what a test waits at most, on a loaded machine; the time taken is printed
# (docs/performance)
CROWD = os.path.join(os.path.dirname(__file__), "programs", "agent_crowd.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def all_in(crowd):
    """Seconds the crowd took to be in, as it says once every agent is."""
    line = crowd.stdout.readline()
    assert line.startswith("in "), "the crowd ended: %r" % line
    return float(line.split()[1])


def listed(dpdb):
    """How many processes the hub lists, asked on its Unix socket (found as a user's local hub)."""
    done = dpdb.run("dpdb", "ls", "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    return len(json.loads(done.stdout)["processes"])


# The hub is C++ and the agents are played by this test: nothing here depends on the
# interpreter, and a minute is enough to spend once per CI run (README, "which suite runs where").
@pytest.mark.skipif(sys.version_info[:2] != (3, 12), reason="runs on 3.12 only (the hub's own)")
def test_ten_thousand_agents_from_one_address_are_all_back_after_a_hub_restart(dpdb):
    port = free_port()
    hub = StandaloneHub(dpdb, "--listen", "127.0.0.1:%d" % port, "--insecure")
    with open(hub.secret_file) as f:
        secret = f.read().strip()
    # The agent key, as `dpdb run` gives its processes (wire/auth: HMAC(secret, "dpdb1|agent-key")).
    key = hmac.new(secret.encode(), b"dpdb1|agent-key", hashlib.sha256).hexdigest()
    crowd = subprocess.Popen([sys.executable, CROWD, str(port), key, str(AGENTS), str(BOUND)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        first = all_in(crowd)
        assert listed(dpdb) == AGENTS
        hub.stop()
        hub.start()
        crowd.stdin.write("again\n")
        crowd.stdin.flush()
        again = all_in(crowd)
        assert listed(dpdb) == AGENTS
        print("%d agents from one address: %.1f s at first, %.1f s after a restart"
              % (AGENTS, first, again))
        crowd.stdin.write("end\n")
        crowd.stdin.flush()
        assert crowd.wait(timeout=60) == 0
    finally:
        if crowd.poll() is None:
            crowd.kill()
            crowd.wait()
        if hub.process.poll() is None:
            hub.stop()
