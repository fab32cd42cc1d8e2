"""`dpdb break` waits for the processes' answers while they keep coming, as hundreds arming on
one host do for seconds, and stops waiting once none has answered for a while (a stopped
process: test_break_report.py)."""

import os
import signal
import time

import pexpect

from conftest import plain, wait_until
from test_hub import Hub

PROCESSES = 4
# Between one process's answer and the next one's resumption: together longer than the 1.5 s
# that `dpdb break` used to wait in all, each shorter than the 2 s it waits for a next answer.
SPACING = 0.6


def test_break_waits_while_processes_keep_answering(dpdb):
    script = os.path.join(dpdb.root, "idle.py")
    with open(script, "w") as f:
        f.write("import os, time\nprint('pid', os.getpid(), flush=True)\n"
                "while True:\n    time.sleep(0.05)\n")
    hub = Hub(dpdb)  # one hub for the separate `dpdb run`s
    pids = []
    for _ in range(PROCESSES):
        run = dpdb.spawn("dpdb", "run", script, env=hub.env)
        run.expect(r"pid (\d+)")
        pids.append(int(run.match.group(1)))
        dpdb.track(pids[-1])
    wait_until(lambda: len(dpdb.ls(env=hub.env)["processes"]) == PROCESSES, "the processes")
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    listed = lambda: dpdb.run("dpdb", "break", "--list", env=hub.env).stdout  # noqa: E731
    try:
        adding = dpdb.spawn("dpdb", "break", script + ":4", env=hub.env)
        adding.expect("breakpoint 1 at")
        for armed, pid in enumerate(pids, 1):
            time.sleep(SPACING)  # a process slow to answer
            os.kill(pid, signal.SIGCONT)
            wait_until(lambda: "[%d process" % armed in listed(),
                       "process %d of %d to arm it" % (armed, PROCESSES))
        adding.expect(pexpect.EOF)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    report = plain(adding.before)
    assert "armed in %d processes" % PROCESSES in report, report
    assert "not answered" not in report, report
