"""Faults between a job, its hub and its clients: the job never waits on the debugger, and the
user is told what is reachable. Hub down when `dpdb run` starts; a breakpoint() reached with no
hub connected (DPDB_WAIT's default waits a bounded time for one)."""

import os
import select
import signal
import subprocess
import time

from conftest import DPDB, PROMPT, TIMEOUT, finish, program, stop
from test_remote import StandaloneHub


def down_hub(dpdb):
    """A TCP hub that has run once (its secret and certificate exist, its port is known) and is
    down now; start() brings it back on the same port."""
    hub = StandaloneHub(dpdb, "--listen", "127.0.0.1:0")
    hub.args = ("--listen", "127.0.0.1:" + hub.tcp.rsplit(":", 1)[1])
    hub.stop(signal.SIGKILL)
    return hub


def read_line(stream, what, timeout=TIMEOUT):
    """The next line of an unbuffered pipe, waiting at most timeout."""
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0, "no line with %s; so far %r" % (what, line)
        if select.select([stream], [], [], left)[0]:
            char = os.read(stream.fileno(), 1)
            assert char, "the output ended before %s; so far %r" % (what, line)
            line += char
    return line.decode()


def start_run(dpdb, env, *args):
    """`dpdb run hub_later.py` as a batch job: no terminal, a process group of its own."""
    return subprocess.Popen([DPDB, "run", program("hub_later.py"), *args],
                            env=dict(dpdb.env, **env), cwd=dpdb.root, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                            start_new_session=True)


def test_dpdb_run_starts_the_program_when_the_hub_is_down_and_joins_it_later(dpdb):
    hub = down_hub(dpdb)
    go = os.path.join(dpdb.root, "go")
    job = start_run(dpdb, hub.env(), go)
    try:
        said = read_line(job.stderr, "what dpdb says")
        assert said.startswith("dpdb: cannot connect to hub at %s: " % hub.tcp), said
        assert said.endswith("; the program runs, and is debuggable once the hub answers\n")
        assert read_line(job.stdout, "the program ran").startswith("job running, pid")

        hub.start()
        client = dpdb.spawn("dpdb", "attach", "--next", env=hub.env())
        client.expect("waiting for the next breakpoint")
        open(go, "w").close()
        client.expect(r"attached to session \d+: pid \d+")
        client.expect(PROMPT)
        client.sendline("p answer")
        client.expect(r"\r\n42\r\n")
        client.expect(PROMPT)
        client.sendline("c")
        finish(client)
        out, err = (text.decode() for text in job.communicate(timeout=TIMEOUT))
        assert job.returncode == 0 and "job done, answer 42\n" in out, (out, err)
    finally:
        stop(job)
        if hub.process.poll() is None:
            hub.stop()


def test_a_breakpoint_with_no_hub_waits_for_one_a_bounded_time_then_continues(dpdb):
    hub = down_hub(dpdb)
    go = os.path.join(dpdb.root, "go")
    open(go, "w").close()
    job = start_run(dpdb, dict(hub.env(), DPDB_WAIT="hub:1"), go)
    try:
        out, err = (text.decode() for text in job.communicate(timeout=TIMEOUT))
    finally:
        stop(job)
    assert job.returncode == 0 and "job done, answer 42" in out, (out, err)
    assert "per DPDB_WAIT it waits 1s for a hub, then continues" in err, err
    assert "no hub connected within 1s (DPDB_WAIT); continuing" in err, err


def test_dpdb_run_console_carries_on_after_a_hub_kill_and_restart(dpdb):
    hub = StandaloneHub(dpdb, "--listen", "127.0.0.1:0")
    hub.args = ("--listen", "127.0.0.1:" + hub.tcp.rsplit(":", 1)[1])
    go = os.path.join(dpdb.root, "go")
    try:
        run = dpdb.spawn("dpdb", "run", program("hub_later.py"), go, env=hub.env())
        run.expect("job running, pid")
        hub.stop(signal.SIGKILL)
        run.expect("lost the hub")
        run.expect("the program runs on; the console carries on once the hub answers")
        hub.start()
        open(go, "w").close()
        run.expect(PROMPT)
        run.sendline("p answer")
        run.expect(r"\r\n42\r\n")
        run.expect(PROMPT)
        run.sendline("c")
        run.expect("job done, answer 42")
        finish(run)
    finally:
        if hub.process.poll() is None:
            hub.stop()


def test_dpdb_attach_rides_out_a_hub_kill_and_restart_with_the_same_session_id(dpdb):
    hub = StandaloneHub(dpdb, "--listen", "127.0.0.1:0")
    hub.args = ("--listen", "127.0.0.1:" + hub.tcp.rsplit(":", 1)[1])
    job = subprocess.Popen([DPDB, "run", program("sessions.py"), "again"],
                           env=dict(dpdb.env, **hub.env()), cwd=dpdb.root,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    paused = lambda: dpdb.wait_ls(lambda listing: listing["sessions"],  # noqa: E731
                                  env=hub.env())["sessions"]
    try:
        # The first stop let go, so that the second is not numbered 1, as the first session of
        # a restarted hub that forgot the ids would be.
        first = paused()[0]["sid"]
        client = dpdb.spawn("dpdb", "attach", str(first), env=hub.env())
        client.expect(PROMPT)
        client.sendline("c")
        finish(client)
        sid = dpdb.wait_ls(lambda listing: [s for s in listing["sessions"] if s["sid"] != first],
                           env=hub.env())["sessions"][0]["sid"]
        assert sid != 1
        client = dpdb.spawn("dpdb", "attach", str(sid), env=hub.env())
        client.expect(r"attached to session %d" % sid)
        client.expect(PROMPT)
        hub.stop(signal.SIGKILL)
        client.expect("lost the hub")
        client.expect("waiting for the hub to come back; attaching again then")
        hub.start()
        client.expect(r"attached to session %d" % sid)
        client.expect(PROMPT)
        assert [s["sid"] for s in paused()] == [sid]
        client.sendline("p i")
        client.expect(r"(\r\n|\x1b\[K)2\r\n")
        client.expect(PROMPT)
        client.sendline("c")
        finish(client)
        output, _ = job.communicate(timeout=30)
        assert job.returncode == 0 and "program done" in output, output
    finally:
        stop(job)
        if hub.process.poll() is None:
            hub.stop()
