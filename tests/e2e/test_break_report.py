"""`dpdb break` says in one line where a breakpoint went, at any scale: armed in how many of how
many processes, pending where its file is not loaded, and which processes have not answered
within its bound (stopped ones here), by host."""

import os
import signal
import socket

from conftest import line_of, program, wait_until

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
