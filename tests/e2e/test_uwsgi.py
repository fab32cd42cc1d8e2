"""uWSGI, which embeds CPython in its own executable and forks its workers in C: `dpdb run
uwsgi …` runs the executable itself (not as a script), each worker registers under its own pid
with sessions of its own, and `dpdb attach -p MASTER --tree` takes a uWSGI started without dpdb.
dev/test runs these in the frameworks' venv, where uWSGI is installed from PyPI; elsewhere they
skip."""

import os
import re
import signal
import subprocess
import sys

import pytest

from conftest import PROMPT, finish, line_of, program, wait_until
from test_supervisors import Request, alive, free_port, nothing_left  # noqa: F401 (a fixture)

FRAMEWORKS = program("frameworks")
APP = os.path.join(FRAMEWORKS, "uwsgi_app.py")
UWSGI = os.path.join(os.path.dirname(sys.executable), "uwsgi")
MERCY = 20  # seconds uWSGI gives a worker to end at a graceful stop before it kills it


def uwsgi_args(port, fifo):
    return [UWSGI, "--master", "--processes", "2", "--http", "127.0.0.1:%d" % port,
            "--wsgi-file", "uwsgi_app.py", "--master-fifo", fifo,
            "--worker-reload-mercy", str(MERCY)]


def spawned(output):
    """(master pid, worker pids) from uWSGI's start-up lines."""
    master = int(re.search(r"spawned uWSGI master process \(pid: (\d+)\)", output).group(1))
    workers = {int(pid) for pid in re.findall(r"spawned uWSGI worker \d+ \(pid: (\d+)", output)}
    return master, workers


def stop_gracefully(fifo):
    """As an operator stops uWSGI for good: "q" on its master FIFO, a graceful shutdown in
    which each worker gets SIGTERM and `MERCY` seconds to end."""
    with open(fifo, "w") as master:
        master.write("q")


@pytest.fixture
def uwsgi():
    if not os.path.exists(UWSGI):
        pytest.skip("uWSGI is not installed here (the frameworks' venv has it)")
    return UWSGI


def session_in_a_worker(run, workers, path_of_request):
    run.expect(r"attached to session \d+: pid (\d+)")
    pid = int(run.match.group(1))
    assert pid in workers
    run.expect(PROMPT)
    run.sendline("p pid, path")
    run.expect(r"\(%d, '%s'\)" % (pid, path_of_request))
    run.expect(PROMPT)
    run.sendline("c")
    return pid


def test_uwsgi_workers_stop_in_sessions_of_their_own_under_dpdb_run(dpdb, uwsgi):
    port = free_port()
    fifo = os.path.join(dpdb.root, "uwsgi.fifo")
    run = dpdb.spawn("dpdb", "run", *uwsgi_args(port, fifo), cwd=FRAMEWORKS)
    run.expect(r"spawned uWSGI worker 2 \(pid: \d+")
    run.expect("spawned uWSGI http 1")
    master, workers = spawned(run.logfile_read.getvalue())
    wait_until(lambda: {p["pid"] for p in dpdb.ls()["processes"]} >= {master, *workers},
               "the master and both workers to register")

    request = Request("http://127.0.0.1:%d/stop" % port)
    pid = session_in_a_worker(run, workers, "/stop")
    assert request.answer() == "/stop %d\n" % pid

    line = line_of(APP, "global breakpoint here")
    assert dpdb.run("dpdb", "break", "uwsgi_app.py:%d" % line).returncode == 0
    request = Request("http://127.0.0.1:%d/work" % port)
    pid = session_in_a_worker(run, workers, "/work")
    assert request.answer() == "/work %d\n" % pid
    assert dpdb.run("dpdb", "break", "--clear").returncode == 0

    stop_gracefully(fifo)
    finish(run, 0)
    transcript = run.logfile_read.getvalue()
    assert "NO MERCY" not in transcript
    for worker in workers:
        assert not alive(worker)


def stop_in_the_next_session(dpdb, port, workers):
    """`dpdb attach --next`, then a request that stops in one of `workers`: answered after `c`."""
    session = dpdb.spawn("dpdb", "attach", "--next")
    session.expect("waiting for the next breakpoint anywhere")
    request = Request("http://127.0.0.1:%d/stop" % port)
    pid = session_in_a_worker(session, workers, "/stop")
    finish(session)
    assert request.answer() == "/stop %d\n" % pid


def test_uwsgi_started_without_dpdb_is_attached_as_a_tree(dpdb, uwsgi):
    port = free_port()
    fifo = os.path.join(dpdb.root, "uwsgi.fifo")
    log = os.path.join(dpdb.root, "uwsgi.log")
    with open(log, "w") as output:
        server = subprocess.Popen(uwsgi_args(port, fifo), cwd=FRAMEWORKS, stdout=output,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  env=dpdb.env)
    try:
        wait_until(lambda: "spawned uWSGI http 1" in open(log).read(), "uWSGI to start")
        master, workers = spawned(open(log).read())
        done = dpdb.run("dpdb", "attach", "-p", str(master), "--tree", "--no-pause")
        assert done.returncode == 0, done.stderr
        assert {p["pid"] for p in dpdb.ls()["processes"]} >= {master, *workers}

        stop_in_the_next_session(dpdb, port, workers)

        # Workers uWSGI respawns now are forked in C without Python's fork hooks (uWSGI was
        # started without them): they must leave the master's connection alone, and stop in
        # sessions of their own once they need the hub.
        for worker in workers:
            os.kill(worker, signal.SIGKILL)
        wait_until(lambda: len(re.findall(r"Respawned uWSGI worker", open(log).read())) == 2,
                   "uWSGI to respawn both workers")
        respawned = {int(pid) for pid in
                     re.findall(r"Respawned uWSGI worker \d+ \(new pid: (\d+)\)", open(log).read())}
        stop_in_the_next_session(dpdb, port, respawned)
        assert master in {p["pid"] for p in dpdb.ls()["processes"]}

        stop_gracefully(fifo)
        assert server.wait(timeout=MERCY + 30) == 0
        assert "NO MERCY" not in open(log).read()
    finally:
        if server.poll() is None:
            os.kill(server.pid, signal.SIGKILL)
            server.wait()
        dpdb.run("dpdb", "hub", "--stop")  # the local hub the attach started
