"""Ray under `dpdb run`: breakpoint() in a task and in an actor method opens a dpdb session
labelled with the task, a global breakpoint by location stops in a task whose function Ray sent
by value, and `dpdb ps` shows Ray's native processes (exec'd by the driver's children) with the
workers below them. dev/test runs this in build/venv-frameworks; without Ray it skips."""

import json
import os
import re
import signal

import pytest

from conftest import PROMPT, finish, line_of, program, stop_line, wait_until

pytest.importorskip("ray")

JOB = program(os.path.join("frameworks", "ray_job.py"))
# Ray's local cluster takes seconds to start on a small machine.
RAY_TIMEOUT = 120


@pytest.fixture
def ray_run(dpdb):
    env = {"RAY_TMPDIR": os.path.join(dpdb.root, "ray"), "RAY_USAGE_STATS_ENABLED": "0"}
    run = dpdb.spawn("dpdb", "run", JOB, os.path.join(dpdb.root, "go"), env=env,
                     timeout=RAY_TIMEOUT)
    yield run
    # Ray's processes share the job's process group (the pseudo-terminal's session); a test
    # that fails leaves none of them behind.
    try:
        os.killpg(run.pid, signal.SIGKILL)
    except OSError:
        pass


def ps(dpdb):
    done = dpdb.run("dpdb", "ps", "--json")
    assert done.returncode == 0, done.stderr
    return {p["pid"]: p for p in json.loads(done.stdout)}


def test_breakpoints_in_ray_tasks_and_actors(dpdb, ray_run):
    run = ray_run
    run.expect(r"attached to session \d+: pid (\d+) \[ray_job=\w+,ray_node=\w+\] "
               r"ray task square, thread MainThread")
    worker = int(run.match.group(1))
    run.expect(stop_line(r"return y"))
    run.expect(PROMPT)
    run.sendline("p x, y")
    run.expect(r"\(7, 49\)")
    run.expect(PROMPT)

    # Ray's raylet and GCS server were forked by the driver and exec'd: shown running, with
    # the worker below the raylet.
    processes = ps(dpdb)
    raylet = processes[processes[worker]["ppid"]]
    assert re.fullmatch(r"exec'd .*/raylet, running", raylet["state"]), raylet
    assert any(re.fullmatch(r"exec'd .*/gcs_server, running", p["state"])
               for p in processes.values()), processes
    assert not any("vanished" in p["state"] for p in processes.values()), processes
    run.sendline("c")
    run.expect("task 49")

    run.expect(r"attached to session \d+: pid \d+ \[ray_job=\w+,ray_node=\w+\] "
               r"ray actor Counter.incr, thread MainThread")
    run.expect(stop_line(r"return self.n"))
    run.expect(PROMPT)
    run.sendline("p self.n")
    run.expect(r"\r\n1\r\n")
    run.sendline("c")
    run.expect("actor 1")

    run.expect("waiting for the global breakpoint")
    line = line_of(JOB, "the line of a global breakpoint")
    added = dpdb.run("dpdb", "break", "ray_job.py:%d" % line)
    assert added.returncode == 0, added.stderr
    open(os.path.join(dpdb.root, "go"), "w").close()
    run.expect(r"ray task halve, thread MainThread, at ray_job.py:%d in halve\(\)" % line)
    run.expect(PROMPT)
    run.sendline("p x")
    run.expect(r"\r\n10\r\n")
    run.sendline("c")
    run.expect(r"halved 5\.0")
    run.expect("ray done")
    finish(run)
