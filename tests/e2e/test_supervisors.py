"""Workers paused past their supervisor's timeout: real gunicorn, uvicorn and Celery, each under
`dpdb run`, a request or task that stops at a breakpoint, a wait longer than the timeout, and
the session still answers, the request still gets its answer; with the strategy switched off,
the supervisor kills the worker (so the strategy is what keeps it alive). dev/test runs these in
a venv of their own (build/venv-frameworks); where the frameworks are not installed they skip."""

import os
import signal
import socket
import sys
import threading
import time
import urllib.request

import pytest

from conftest import PROMPT, TIMEOUT, finish, plain, program, wait_until

# The supervisor's timeout in these tests, and how long a test stays paused: well past it.
SUPERVISOR_TIMEOUT = 2
PAUSED_FOR = 3 * SUPERVISOR_TIMEOUT
FRAMEWORKS = program("frameworks")


@pytest.fixture(autouse=True)
def nothing_left(dpdb):
    """A test that fails leaves no server behind: `dpdb run` and its program share a process
    group (the pseudo-terminal's session), ended whole."""
    yield
    for child in dpdb.children:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass  # ended already


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Request:
    """One HTTP request, sent from a thread of the test, whose answer is waited for later."""

    def __init__(self, url):
        self.body = self.error = None
        self.thread = threading.Thread(target=self._send, args=(url,), daemon=True)
        self.thread.start()

    def _send(self, url):
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT) as answer:
                self.body = answer.read().decode()
        except Exception as error:  # what the test checks, in the test's thread
            self.error = error

    def answer(self):
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive(), "the request got no answer"
        return self.body if self.error is None else self.error


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stay_paused_and_answer(run):
    """At the prompt: stays paused past the supervisor's timeout, then checks the session
    still answers."""
    run.expect(PROMPT)
    time.sleep(PAUSED_FOR)
    run.sendline("p total")
    run.expect(r"\r\n10\r\n")
    run.expect(PROMPT)


def end_server(run, supervisor, *workers):
    """SIGTERM to the supervisor, as a service manager stops it: everything ends."""
    os.kill(supervisor, signal.SIGTERM)
    finish(run, 0)
    for pid in workers:
        wait_until(lambda: not alive(pid), "worker %d to end" % pid)


# --- gunicorn -------------------------------------------------------------------------------

GUNICORN_WORKERS = {
    "sync": ("sync", "wsgi_app:app"),
    "gthread": ("gthread", "wsgi_app:app"),
    "uvicorn": ("uvicorn.workers.UvicornWorker", "asgi_app:app"),
}


def start_gunicorn(dpdb, worker, env=None):
    """gunicorn with one worker under `dpdb run`: (run, port, arbiter pid, worker pid)."""
    pytest.importorskip("gunicorn")
    pytest.importorskip("flask" if worker != "uvicorn" else "uvicorn")
    worker_class, app = GUNICORN_WORKERS[worker]
    port = free_port()
    # --graceful-timeout: at end_server's SIGTERM the arbiter waits that long for its workers
    # (30 s by default, as long as finish() waits); a worker the TERM found still booting made
    # a CI run time out once.
    run = dpdb.spawn("dpdb", "run", "-m", "gunicorn", "--timeout", str(SUPERVISOR_TIMEOUT),
                     "--graceful-timeout", "10", "--workers", "1", "--worker-class", worker_class,
                     "--bind", "127.0.0.1:%d" % port, app, cwd=FRAMEWORKS, env=env)
    run.expect(r"\[(\d+)\] \[INFO\] Listening at")
    arbiter = int(run.match.group(1))
    run.expect(r"Booting worker with pid: (\d+)")
    return run, port, arbiter, int(run.match.group(1))


@pytest.mark.parametrize("worker", sorted(GUNICORN_WORKERS))
def test_gunicorn_worker_paused_past_its_timeout_lives_and_answers(dpdb, worker):
    run, port, arbiter, pid = start_gunicorn(dpdb, worker)
    request = Request("http://127.0.0.1:%d/score/5" % port)
    run.expect(r"attached to session \d+: pid %d" % pid)
    run.expect(r"gunicorn: keeping the worker's heartbeat while it is paused \(its --timeout of "
               r"%gs counts again once it runs\)" % SUPERVISOR_TIMEOUT)
    stay_paused_and_answer(run)
    run.sendline("c")
    assert request.answer() == "score 10\n"
    assert "WORKER TIMEOUT" not in run.logfile_read.getvalue()
    end_server(run, arbiter, pid)


def test_gunicorn_kills_a_paused_worker_without_the_strategy(dpdb):
    run, port, arbiter, pid = start_gunicorn(dpdb, "sync", env={"DPDB_SUPERVISORS": "-gunicorn"})
    request = Request("http://127.0.0.1:%d/score/5" % port)
    run.expect(PROMPT)
    run.expect(r"WORKER TIMEOUT \(pid:%d\)" % pid, timeout=PAUSED_FOR)
    run.expect(r"session \d+ process %d went away" % pid)
    assert isinstance(request.answer(), Exception)
    assert "keeping the worker's heartbeat" not in plain(run.logfile_read.getvalue())
    run.expect(r"Booting worker with pid: (\d+)")  # its replacement
    end_server(run, arbiter, int(run.match.group(1)))


# --- uvicorn --workers ----------------------------------------------------------------------


def test_uvicorn_worker_paused_in_its_event_loop_passes_the_health_check(dpdb):
    # uvicorn's supervisor pings each worker through a pipe every half second and kills one that
    # does not answer within --timeout-worker-healthcheck. The answer comes from a thread of
    # uvicorn's own, which a pause of the event loop's thread leaves running: no strategy needed.
    pytest.importorskip("uvicorn")
    port = free_port()
    run = dpdb.spawn("dpdb", "run", "-m", "uvicorn", "--workers", "2", "--no-use-colors",
                     "--timeout-worker-healthcheck", str(SUPERVISOR_TIMEOUT),
                     "--port", str(port), "asgi_app:app", cwd=FRAMEWORKS)
    run.expect(r"Started parent process \[(\d+)\]")
    parent = int(run.match.group(1))
    run.expect("Application startup complete")  # a worker listens on the parent's socket
    request = Request("http://127.0.0.1:%d/score/5" % port)
    run.expect(r"attached to session \d+: pid (\d+)")
    pid = int(run.match.group(1))
    stay_paused_and_answer(run)
    run.sendline("c")
    assert request.answer() == "score 10\n"
    assert "died" not in run.logfile_read.getvalue()
    end_server(run, parent, pid)


# --- Celery prefork -------------------------------------------------------------------------


def start_celery(dpdb, env=None, options=()):
    """A Celery worker with a prefork pool of one under `dpdb run` (with `options`), its broker a
    folder: (run, its main pid, its environment)."""
    pytest.importorskip("celery")
    env = dict(env or {}, CELERY_QUEUE=os.path.join(dpdb.root, "queue"),
               TASK_TIME_LIMIT=str(SUPERVISOR_TIMEOUT))
    run = dpdb.spawn("dpdb", "run", *options, "-m", "celery", "-A", "tasks", "worker", "--pool", "prefork",
                     "--concurrency", "1", "--loglevel", "INFO", "--without-gossip",
                     "--without-mingle", "--without-heartbeat", cwd=FRAMEWORKS, env=env)
    run.expect(r"worker ready, main pid (\d+)")
    return run, int(run.match.group(1)), env


def send_task(dpdb, env, task="score"):
    done = dpdb.run(sys.executable, "-c", "import tasks; tasks.%s.delay(5)" % task,
                    env=dict(env, PYTHONPATH=FRAMEWORKS))
    assert done.returncode == 0, done.stderr


def test_celery_task_paused_past_its_time_limits_lives_and_completes(dpdb):
    run, main, env = start_celery(dpdb)
    send_task(dpdb, env)
    run.expect(r"attached to session \d+: pid (\d+) ForkPoolWorker-1")
    worker = int(run.match.group(1))
    run.expect(r"celery: the pool holds this task's time limits while it is paused \(they "
               r"start again, in full, once it runs\)")
    stay_paused_and_answer(run)
    run.sendline("c")
    run.expect(r"Task tasks\.score\[[-0-9a-f]+\] succeeded in [0-9.]+s: 10")
    transcript = plain(run.logfile_read.getvalue())
    assert "time limit (" not in transcript and "SIGUSR1" not in transcript
    end_server(run, main, worker)


def test_celery_kills_a_paused_task_without_the_strategy(dpdb):
    run, main, env = start_celery(dpdb, env={"DPDB_SUPERVISORS": "-celery"})
    send_task(dpdb, env)
    run.expect(r"attached to session \d+: pid (\d+)")
    worker = int(run.match.group(1))
    run.expect(PROMPT)
    run.expect(r"Hard time limit \(%.1fs\) exceeded for tasks\.score" % SUPERVISOR_TIMEOUT,
               timeout=PAUSED_FOR)
    run.expect(r"session \d+ process %d went away" % worker)
    end_server(run, main)
