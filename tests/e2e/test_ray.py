"""Ray under `dpdb run`: breakpoint() in a task, an actor method and an async actor opens a session
labelled with the task, a global breakpoint by location stops in a task whose function Ray sent
by value, and `dpdb ps` shows Ray's native processes (exec'd by the driver's children) with the
workers below them; --post-mortem (and the hub's "uncaught exceptions" breakpoint) opens in the
worker whose task raised; a cluster whose head runs under `dpdb run` (`ray start --head`) debugs
the tasks of jobs submitted to it from elsewhere. dev/test runs this in build/venv-frameworks;
without Ray it skips."""

import json
import os
import re
import signal
import socket
import subprocess
import sys

import pytest

from conftest import PROMPT, expect_all, finish, line_of, program, stop_line, wait_until
from test_post_mortem import hub_with

pytest.importorskip("ray")

JOB = program(os.path.join("frameworks", "ray_job.py"))
# Ray's local cluster takes seconds to start on a small machine.
RAY_TIMEOUT = 120


def ray_env(dpdb):
    return {"RAY_TMPDIR": os.path.join(dpdb.root, "ray"), "RAY_USAGE_STATS_ENABLED": "0"}


def end_group(run):
    """Ray's processes share the run's process group (the pseudo-terminal's session): a test
    that fails leaves none of them behind."""
    try:
        os.killpg(run.pid, signal.SIGKILL)
    except OSError:
        pass


@pytest.fixture
def ray_run(dpdb):
    run = dpdb.spawn("dpdb", "run", JOB, os.path.join(dpdb.root, "go"), env=ray_env(dpdb),
                     timeout=RAY_TIMEOUT)
    yield run
    end_group(run)


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

    # An async actor's method runs on the actor's event loop, in a thread of Ray's.
    run.expect(r"attached to session \d+: pid \d+ \[ray_job=\w+,ray_node=\w+\] "
               r"ray actor AsyncCounter.incr, thread ")
    run.expect(stop_line(r"return total"))
    run.expect(PROMPT)
    run.sendline("p total")
    run.expect(r"\r\n5\r\n")
    run.sendline("c")
    run.expect("async actor 5")

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


def test_a_cluster_started_under_dpdb_debugs_the_jobs_submitted_to_it(dpdb):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = ray_env(dpdb)
    head = dpdb.spawn("dpdb", "run", "-m", "ray.scripts.scripts", "start", "--head", "--block",
                      "--port", str(port), "--num-cpus", "1", "--include-dashboard", "false",
                      env=env, timeout=RAY_TIMEOUT)
    try:
        head.expect("Ray runtime started")
        # The job's driver does not carry dpdb (no DPDB_* in its environment); the cluster's
        # workers do, from the raylet that `dpdb run` started.
        driver = subprocess.Popen([sys.executable, program(os.path.join("frameworks",
                                                                        "ray_submit.py"))],
                                  env=dict(dpdb.env, **env), cwd=dpdb.root,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            head.expect(r"attached to session \d+: pid \d+ \[ray_job=\w+,ray_node=\w+\] "
                        r"ray task square, thread MainThread, at ray_submit.py:\d+ in square")
            head.expect(PROMPT)
            head.sendline("p x, y")
            head.expect(r"\(6, 36\)")
            head.expect(PROMPT)
            head.sendline("c")
            output = driver.communicate(timeout=RAY_TIMEOUT)[0]
            assert "task 36" in output, output
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
    finally:
        end_group(head)


@pytest.mark.parametrize("asked_by", ["--post-mortem", "the hub's uncaught exceptions"])
def test_post_mortem_of_a_ray_task_opens_in_its_worker(dpdb, asked_by):
    env, options = ray_env(dpdb), ["--post-mortem"]
    if asked_by != "--post-mortem":  # what an IDE's `uncaught` filter sets
        env, options = dict(env, **hub_with(dpdb, "uncaught exceptions")), []
    run = dpdb.spawn("dpdb", "run", *options, program(os.path.join("frameworks", "ray_fail.py")),
                     env=env, timeout=RAY_TIMEOUT)
    try:
        line = line_of(program(os.path.join("frameworks", "ray_fail.py")), "the task's failing")
        expect_all(run, r"ray task ratio, thread MainThread, at ray_fail.py:%d in ratio\(\)" % line,
                   r"ray: post-mortem of ZeroDivisionError in ray task ratio \(the caller gets a "
                   r"RayTaskError once you continue\)")
        run.expect(PROMPT)
        run.sendline("p x")
        run.expect(r"\r\n3\r\n")
        run.expect(PROMPT)
        run.sendline("c")
        run.expect("the caller got ZeroDivisionError")
        finish(run)
    finally:
        end_group(run)
