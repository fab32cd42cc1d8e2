"""A debugged process is a peer the hub cannot trust: with the credential every process of a job
holds it sends well-formed messages whose contents have other types or sizes than dpdb's, or
text meant for the owner's terminal. Each such message costs only its sender's connection; the
hub keeps nothing of it and answers on — also after a restart on the same state — and nothing a
peer sent reaches a client's output raw."""

import glob
import json
import os
import subprocess
import sys
import time

import pexpect

from conftest import DPDB, wait_until
from test_hub import Hub, dropped, frame, open_connection, read_frame, say_hello

OSC52 = "\x1b]52;c;aGk=\x07"  # a clipboard write, as a terminal would run it


def agent(hub, proc):
    """An agent connection past the handshake describing itself as `proc`; None if refused."""
    sock, challenge = open_connection(hub)
    answer = say_hello(hub, sock, challenge, "agent", proc)
    if answer is None or answer["t"] != "welcome":
        sock.close()
        return None
    assert read_frame(sock)["t"] == "breakpoints"
    return sock


def listing_answers(dpdb, hub):
    done = dpdb.run("dpdb", "ls", "--json", env=hub.env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_ill_typed_messages_cost_only_their_sender_also_after_a_restart(dpdb):
    hub = Hub(dpdb)
    # The findings, each a crash of the hub before: a string pid, then a logpoint message; a
    # string pid that disconnects; an exit record with a string where a flag goes (which killed
    # the hub at every later `dpdb ls`, across restarts); a stacks reply whose text is a number.
    assert agent(hub, {"pid": "x", "argv": ["rogue"]}) is None
    sock = agent(hub, {"pid": 4000000, "disconnected": "yes"})
    assert sock is None
    sock = agent(hub, {"pid": 4000001, "argv": ["rogue"]})
    sock.sendall(frame({"t": "log_lines", "lines": [{"time": "now", "text": 1}]}))
    assert dropped(sock)
    sock = agent(hub, {"pid": 4000002, "argv": ["rogue"]})
    asking = subprocess.Popen([DPDB, "stacks", "4000002"], env=dict(dpdb.env, **hub.env),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        request = read_frame(sock)
        assert request["t"] == "stacks_request"
        sock.sendall(frame({"t": "stacks_reply", "req": request["req"], "stacks": {"text": 7}}))
        assert dropped(sock)
        asking.communicate(timeout=30)
    finally:
        if asking.poll() is None:
            asking.kill()
            asking.wait()
    log = hub.log()
    for said in ("proc.pid is not an integer", "proc.disconnected is not true or false",
                 "log_lines.lines.time is not a finite number",
                 "stacks_reply.stacks.text is not a string"):
        assert said in log, log
    listing = listing_answers(dpdb, hub)
    assert not [p for p in listing["processes"] if p["pid"] in (4000000, 4000001, 4000002)]
    done = dpdb.run("dpdb", "stacks", env=hub.env)
    assert done.returncode in (0, 1), done.stderr
    done = dpdb.run("dpdb", "logs", "--json", env=hub.env)
    assert done.returncode == 0 and "rogue" not in done.stdout, done.stdout + done.stderr

    # The same state, a new hub: every command still answers.
    hub.child.kill(15)
    hub.child.expect(pexpect.EOF)
    hub = Hub(dpdb)
    listing_answers(dpdb, hub)
    assert dpdb.run("dpdb", "logs", env=hub.env).returncode == 0
    assert hub.child.isalive()


def test_a_peer_cannot_grow_the_store_past_its_bounds(dpdb):
    hub = Hub(dpdb)
    # A 1 MiB tag, which the hub copied into each of its stored messages, is refused at the door.
    assert agent(hub, {"pid": 4000003, "tags": {"T": "x" * (1 << 19)}}) is None
    sock = agent(hub, {"pid": 4000004, "tags": {"RANK": "0"}})
    lines = [{"time": 1.0 + i, "text": "y" * 20000, "thread": "z" * 20000} for i in range(20)]
    sock.sendall(frame({"t": "log_lines", "lines": lines}))
    wait_until(lambda: "y" * 100 in dpdb.run("dpdb", "logs", "--json", env=hub.env).stdout,
               "the messages kept")
    kept = json.loads("[%s]" % ",".join(
        dpdb.run("dpdb", "logs", "--json", env=hub.env).stdout.split("\n")[:-1]))
    assert len(kept) == 20
    # Text cut to 4 KiB and the thread's name to 200 bytes: about 7 KiB a message at most.
    assert all(len(json.dumps(m)) < 7 * 1024 for m in kept)
    sock.close()
    [store] = glob.glob(os.path.join(dpdb.env["HOME"], ".local", "state", "dpdb", "**",
                                     "hub.sqlite"), recursive=True)
    assert os.path.getsize(store) < 4 * 1024 * 1024


def test_escape_sequences_a_process_sends_reach_no_client_output_raw(dpdb):
    hub = Hub(dpdb)
    sock = agent(hub, {"pid": 4000005, "host": "node" + OSC52, "argv": ["python", OSC52 + "x.py"],
                       "tags": {"ROLE": OSC52}, "process_name": "w\u202e" + OSC52})
    sock.sendall(frame({"t": "log_lines", "lines": [
        {"time": time.time(), "text": "GET /" + OSC52 + "\x1b[2J", "thread": "T" + OSC52}]}))
    wait_until(lambda: "GET" in dpdb.run("dpdb", "logs", env=hub.env).stdout, "the message")
    for command in (["ls"], ["ls", "--all"], ["ps"], ["logs"]):
        done = dpdb.run("dpdb", *command, env=hub.env)
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout and "\u202e" not in done.stdout, (command, done.stdout)
        assert "\\x1b" in done.stdout, (command, done.stdout)
    sock.close()


def test_an_agent_claiming_another_processs_pid_is_refused(dpdb):
    hub = Hub(dpdb)
    victim = subprocess.Popen(["sleep", "60"])
    try:
        assert agent(hub, {"pid": victim.pid, "argv": ["rogue"]}) is None
        assert "it claims pid %d, another process" % victim.pid in hub.log()
        own = agent(hub, {"pid": os.getpid(), "argv": ["honest"]})
        listing = listing_answers(dpdb, hub)
        assert [p["argv"] for p in listing["processes"]] == [["honest"]]
        own.close()
    finally:
        victim.kill()
        victim.wait()


JOB_AS_CLIENT = """
import subprocess, sys
for args in (["ls"], ["break", "victim.py:3", "--log", "stolen {secret}"], ["logs"]):
    done = subprocess.run([sys.argv[1]] + args, capture_output=True, text=True)
    print("exit", done.returncode, done.stderr.strip().splitlines()[-1:], flush=True)
"""


def test_a_process_of_the_job_cannot_act_as_a_client_of_its_run(dpdb):
    script = os.path.join(dpdb.root, "plugin.py")
    with open(script, "w") as f:
        f.write(JOB_AS_CLIENT)
    done = dpdb.run("dpdb", "run", script, DPDB, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("exit")]
    assert len(lines) == 3, done.stdout
    for line in lines:
        assert not line.startswith("exit 0"), done.stdout
        assert "a process of the job cannot be a client" in line, done.stdout


def test_the_agent_key_dpdb_hub_writes_lets_processes_join_and_nothing_more(dpdb):
    hub = Hub(dpdb)
    [key_file] = glob.glob(os.path.join(dpdb.env["HOME"], ".local", "state", "dpdb", "**",
                                        "agent-key"), recursive=True)
    assert os.stat(key_file).st_mode & 0o077 == 0
    node = {"DPDB_HUB": hub.address, "DPDB_TOKEN_FILE": key_file}
    refused = dpdb.run("dpdb", "ls", env=node)
    assert refused.returncode != 0 and "authentication failed" in refused.stderr, refused.stderr
    joined = subprocess.Popen(
        # Before 3.13 breakpoint() stops at the next line: the sleep has a line of its own.
        [sys.executable, "-c", "import time\nbreakpoint()\ntime.sleep(60)"],
        env=dict(dpdb.env, PYTHONBREAKPOINT="dpdb.set_trace", **node),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        dpdb.wait_ls(lambda listing: any(s["pid"] == joined.pid for s in listing["sessions"]),
                     env=hub.env)
    finally:
        joined.kill()
        joined.wait()
