"""A client far from its hub: round trips counted by a relay between them (bench/latency/relay.py,
each chunk held 50 ms each way), never timed. With the hub's certificate pinned, `dpdb ls` takes
two round trips (TLS 1.3, then the early hello with its one question: docs/remote.md) and
`dpdb attach` four to its prompt; without a pin the old handshake runs, as it does for an older
client; a wrong secret still fails in one line."""
import os
import sys

import pytest

from conftest import PROMPT, wait_until
from test_remote import StandaloneHub, jobs, paused_sessions, start_job  # noqa: F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                                "latency"))
from relay import Relay  # noqa: E402


@pytest.fixture
def far_hub(dpdb):
    """A TLS hub, and a relay to it: (hub, relay, the environment of a client through it)."""
    hub = StandaloneHub(dpdb, "--listen", "127.0.0.1:0")
    relay = Relay(hub.tcp.split("//", 1)[1], delay=0.05)
    env = hub.env(DPDB_HUB="tcp://127.0.0.1:%d" % relay.port)
    yield hub, relay, env
    relay.close()
    if hub.process.poll() is None:
        hub.stop()


def ls_through(dpdb, relay, env):
    relay.reset()
    done = dpdb.run("dpdb", "ls", env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout, relay.round_trips()


def test_ls_of_a_pinned_hub_takes_two_round_trips(dpdb, far_hub, jobs):  # noqa: F811
    hub, relay, env = far_hub
    pinned = dict(env, DPDB_TLS_FINGERPRINT=hub.fingerprint)
    output, trips = ls_through(dpdb, relay, pinned)
    assert trips == [2], trips
    assert "0 process(es), 0 paused session(s)" in output
    # With a job paused: the listing still comes with the summary, in the same round trip.
    start_job(dpdb, hub.env(DPDB_TLS_FINGERPRINT=hub.fingerprint), jobs)
    paused_sessions(dpdb, hub.env())
    output, trips = ls_through(dpdb, relay, pinned)
    assert trips == [2], trips
    assert "1 paused session(s)" in output, output


def test_attach_to_a_pinned_hub_takes_four_round_trips_to_its_prompt(dpdb, far_hub, jobs):  # noqa: F811
    hub, relay, env = far_hub
    start_job(dpdb, hub.env(DPDB_TLS_FINGERPRINT=hub.fingerprint), jobs)
    session = paused_sessions(dpdb, hub.env())[0]
    relay.reset()
    client = dpdb.spawn("dpdb", "attach", env=dict(env, DPDB_TLS_FINGERPRINT=hub.fingerprint))
    client.expect(r"attached to session %d" % session["sid"])
    client.expect(PROMPT)
    # TLS; hello with the sessions' list; the console's subscribe and list on the same
    # connection; attach, answered by the prompt.
    assert relay.round_trips() == [4], relay.round_trips()
    client.close(force=True)


def test_a_client_without_a_pin_takes_the_old_handshake(dpdb, far_hub):
    hub, relay, env = far_hub
    output, trips = ls_through(dpdb, relay, env)
    # TLS, the Finished answered by the challenge, the hello, then the one question: the hub
    # says in its welcome that it takes summarize's list_up_to.
    assert trips == [4], trips
    assert "0 process(es)" in output
    assert "authentication failed" not in hub.logged()


def test_a_wrong_secret_through_the_early_hello_fails_in_one_line(dpdb, far_hub):
    hub, relay, env = far_hub
    env = dict(env, DPDB_TLS_FINGERPRINT=hub.fingerprint, DPDB_TOKEN="0" * 64)
    del env["DPDB_TOKEN_FILE"]
    done = dpdb.run("dpdb", "ls", env=env)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "refused the connection: authentication failed (wrong secret)" in done.stderr
    wait_until(lambda: "authentication failed" in hub.logged(), "the hub's log line")
    assert "0" * 64 not in hub.logged()
