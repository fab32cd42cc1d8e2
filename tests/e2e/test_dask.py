"""Dask under `dpdb run`: a LocalCluster of worker processes, each under its nanny. breakpoint() in
a task (in the worker's thread pool) and in an `async def` task (on the worker's event loop)
opens a session in the worker; a global breakpoint by location stops in a task whose function
Dask sent by value; a worker whose event loop stands paused past the scheduler's worker-ttl keeps
its heartbeat (strategy `dask`) and is not restarted, and is subject to the worker-ttl again once
it runs; without the strategy the scheduler has its nanny kill it. dev/test runs this in
build/venv-frameworks; without Dask it skips."""

import os
import re
import signal
import time

import pytest

from conftest import PROMPT, finish, line_of, plain, program, stop_line

pytest.importorskip("distributed")

JOB = program(os.path.join("frameworks", "dask_job.py"))
# Past the worker-ttl the job sets (5 s for a cluster of one) and the scheduler's next look.
PAUSED_FOR = 9
DASK_TIMEOUT = 60
RESTART = r"Worker failed to heartbeat for \d+s; attempting restart"


@pytest.fixture
def dask_run(dpdb):
    runs = []

    def start(mode, env=None):
        run = dpdb.spawn("dpdb", "run", JOB, mode, os.path.join(dpdb.root, "go"), env=env,
                         timeout=DASK_TIMEOUT)
        runs.append(run)
        run.expect("dask ready")
        return run

    yield start
    for run in runs:  # the cluster shares the run's process group: none of it is left behind
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except OSError:
            pass


TOLD = (r"dask: keeping the worker's heartbeat to the scheduler while it is paused \(its "
        r"worker-ttl counts again once it runs\)")


def stop_in_async_task(run, told):
    """The session of the async task's breakpoint, on the worker's event loop: the worker's pid.
    `told`: whether the session says what the strategy does."""
    run.expect(r"attached to session \d+: pid (\d+) Dask Worker process \(from Nanny\), "
               r"thread MainThread")
    pid = int(run.match.group(1))
    if told:
        run.expect(TOLD)
    run.expect(stop_line(r"await asyncio.sleep\(0\)"))
    run.expect(PROMPT)
    return pid


def test_breakpoints_in_dask_tasks_and_a_paused_event_loop(dpdb, dask_run):
    run = dask_run("all")
    run.expect(r"attached to session \d+: pid (\d+) Dask Worker process \(from Nanny\), "
               r"thread \S*Dask-Default-Threads")
    worker = int(run.match.group(1))
    run.expect(stop_line(r"return y"))
    run.expect(PROMPT)
    run.sendline("p x, y")
    run.expect(r"\(7, 49\)")
    run.sendline("c")
    run.expect(r"task 49")

    assert stop_in_async_task(run, told=True) == worker
    time.sleep(PAUSED_FOR)
    run.sendline("p x, y")
    run.expect(r"\(6, 36\)")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect(r"async task 36")
    run.expect(r"same worker True")

    run.expect("waiting for the global breakpoint")
    line = line_of(JOB, "the line of a global breakpoint")
    added = dpdb.run("dpdb", "break", "dask_job.py:%d" % line)
    assert added.returncode == 0, added.stderr
    open(os.path.join(dpdb.root, "go"), "w").close()
    run.expect(r"pid %d .*at dask_job.py:%d in halve\(\)" % (worker, line))
    run.expect(PROMPT)
    run.sendline("p x")
    run.expect(r"\r\n10\r\n")
    run.sendline("c")
    run.expect(r"halved 5\.0")

    # Running again, the worker is subject to the worker-ttl: a task that blocks its loop (no
    # debugger involved) has it restarted, and the task runs again on its replacement.
    run.expect(RESTART)
    run.expect(r"blocked loop run again")
    run.expect(r"same worker False")
    run.expect("dask done")
    transcript = plain(run.logfile_read.getvalue())
    assert len(re.findall(RESTART, transcript)) == 1, transcript
    finish(run)


def test_dask_restarts_a_paused_worker_without_the_strategy(dpdb, dask_run):
    run = dask_run("async", env={"DPDB_SUPERVISORS": "-dask"})
    worker = stop_in_async_task(run, told=False)
    run.expect(RESTART, timeout=PAUSED_FOR * 2)
    run.expect(r"session \d+ process %d went away" % worker)
    # The task runs again in the worker's replacement, and stops again there.
    assert stop_in_async_task(run, told=False) != worker
    assert not re.search(TOLD, plain(run.logfile_read.getvalue()))
    run.sendline("c")
    run.expect(r"async task 36")
    run.expect(r"same worker False")
    run.expect("dask done")
    finish(run)
