"""`dpdb break` says in one line where a breakpoint went, at any scale: armed in how many of how
many processes, pending where its file is not loaded, and which processes have not answered
within its bound (stopped ones here, or slow to arm), by host."""

import json
import os
import signal
import socket
import subprocess

import pexpect
import pytest

from conftest import DPDB, line_of, plain, program, wait_until
from test_faults_network import on_login
from test_hub import Hub
from test_remote import StandaloneHub, two_hosts  # noqa: F401 (a fixture)

PROGRAM = program("break_report.py")


def test_the_report_says_armed_pending_and_who_has_not_answered(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    run.expect(r"workers (\d+) (\d+) (\d+)")
    workers = [int(pid) for pid in run.match.groups()]
    for pid in workers:
        dpdb.track(pid)
    wait_until(lambda: len(dpdb.ls()["processes"]) == 5, "the five processes")
    stopped = workers[0]
    os.kill(stopped, signal.SIGSTOP)
    try:
        added = dpdb.run("dpdb", "break", "break_report.py:%d" % line_of(PROGRAM, "# line: never"))
        assert added.returncode == 0, added.stderr
        report = added.stdout.strip().splitlines()
        assert len(report) == 2, added.stdout  # "breakpoint 1 at …" and the one line
        assert ("armed in 3 processes of 5; pending in 1 (its file not loaded there); 1 has "
                "not answered yet (%s 1): they get it when they do" % socket.gethostname()
                in report[1]), added.stdout
    finally:
        os.kill(stopped, signal.SIGCONT)
    wait_until(lambda: "[4 processes]" in dpdb.run("dpdb", "break", "--list").stdout,
               "the stopped worker to arm it once it runs")
    run.sendintr()


def start_on_hosts(dpdb, hosts):
    """The job on each host of `hosts` ({name: (command prefix, env)}), each in a UTS namespace
    of its own for its name. Returns the runs, and one worker of each to stop."""
    runs, stopped = [], []
    for host, (prefix, env) in hosts.items():
        run = dpdb.spawn(*prefix, "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
                         host, DPDB, "run", PROGRAM, env=env)
        run.expect(r"workers (\d+) (\d+) (\d+)")
        workers = [int(pid) for pid in run.match.groups()]
        for pid in workers:
            dpdb.track(pid)
        runs.append(run)
        stopped.append(workers[0])
    return runs, stopped


def told_by_host(stopped, dpdb_command):
    """`dpdb break` (run by `dpdb_command`) while a worker of hosta and one of hostb are stopped."""
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        added = dpdb_command("break", "break_report.py:%d" % line_of(PROGRAM, "# line: never"))
        assert added.returncode == 0, added.stderr
        assert ("armed in 6 processes of 10; pending in 2 (its file not loaded there); 2 have "
                "not answered yet (hosta 1, hostb 1): they get it when they do"
                in added.stdout), added.stdout
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)


def test_who_has_not_answered_is_told_by_host(dpdb):
    # Two jobs, each in a UTS namespace of its own, so that their processes name two hosts.
    if subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode != 0:
        pytest.skip("a host of its own needs a UTS namespace (unshare --uts: root)")
    hub = Hub(dpdb)
    runs, stopped = start_on_hosts(dpdb, {"hosta": ((), hub.env), "hostb": ((), hub.env)})
    processes = dpdb.wait_ls(lambda listing: len(listing["processes"]) == 10, env=hub.env)
    assert {p["host"] for p in processes["processes"]} == {"hosta", "hostb"}, processes
    told_by_host(stopped, lambda *args: dpdb.run("dpdb", *args, env=hub.env))
    for run in runs:
        run.sendintr()


def test_who_has_not_answered_is_told_by_host_across_a_network(dpdb, two_hosts):  # noqa: F811
    # The hub on the login host's TLS port; one job beside it and one on the node, across the
    # veth link.
    login, node = two_hosts
    hub = StandaloneHub(dpdb, "--listen", "10.231.7.1:0", prefix=["ip", "netns", "exec", login])
    try:
        env = hub.env(DPDB_TLS_FINGERPRINT=hub.fingerprint)
        hosts = {}
        for netns, host in ((login, "hosta"), (node, "hostb")):
            runtime = os.path.join(dpdb.root, host + "-run")
            os.makedirs(runtime, mode=0o700)
            hosts[host] = (("ip", "netns", "exec", netns), dict(env, XDG_RUNTIME_DIR=runtime))
        runs, stopped = start_on_hosts(dpdb, hosts)

        def listed():
            done = on_login(dpdb, login, env, "ls", "--json")
            return done.returncode == 0 and json.loads(done.stdout)["processes"]

        wait_until(lambda: len(listed() or []) == 10, "the ten processes of both hosts")
        assert {p["host"] for p in listed()} == {"hosta", "hostb"}
        told_by_host(stopped, lambda *args: on_login(dpdb, login, env, *args))
        for run in runs:
            run.sendintr()
    finally:
        if hub.process.poll() is None:
            hub.stop()


def test_an_answer_to_an_earlier_change_is_not_taken_for_the_latest(dpdb):
    # A process slow to answer: arming a breakpoint reads its file, and these files are FIFOs,
    # whose lines come only when the test writes them.
    slow = {}
    for name in ("slow_a.py", "slow_b.py"):
        slow[name] = os.path.join(dpdb.root, name)
        os.mkfifo(slow[name])
    script = os.path.join(dpdb.root, "idle.py")
    with open(script, "w") as f:
        f.write("import time\nprint('ready', flush=True)\nwhile True:\n    time.sleep(0.05)\n")
    run = dpdb.spawn("dpdb", "run", script)
    run.expect("ready")
    wait_until(lambda: len(dpdb.ls()["processes"]) == 1, "the process")
    first = dpdb.run("dpdb", "break", slow["slow_a.py"] + ":1")
    assert "1 has not answered yet" in first.stdout, first.stdout  # it waits for slow_a's lines
    assert dpdb.run("dpdb", "break", "--clear", "1").returncode == 0
    adding = dpdb.spawn("dpdb", "break", slow["slow_b.py"] + ":1")
    adding.expect("breakpoint 2 at")
    # While `dpdb break` waits for answers to the add, the process answers the first add and the
    # clear, then waits again, for slow_b's lines: neither answer is one to the add.
    with open(slow["slow_a.py"], "w") as f:
        f.write("a = 1\n")
    adding.expect(pexpect.EOF)
    report = plain(adding.before)
    assert "not loaded in the 1 that answered" not in report, report
    assert "1 has not answered yet (%s 1)" % socket.gethostname() in report, report
    # Its answer to the add, once slow_b's lines come, counts: a FIFO is no source file, so it
    # says the line does not exist (shown only for processes that answered the latest list).
    with open(slow["slow_b.py"], "w") as f:
        f.write("b = 2\n")
    wait_until(lambda: "Line %s:1 does not exist" % slow["slow_b.py"]
               in dpdb.run("dpdb", "break", "--list").stdout, "the process's answer to the add")
    run.sendintr()
