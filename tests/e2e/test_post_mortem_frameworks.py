"""`dpdb run --post-mortem` where a framework catches the exception itself: a Flask view's (the
werkzeug development server answers 500), a Django view's (its development server), a Celery
task's (a prefork worker, a broker in a folder), a task's in a joblib/loky worker (sent back to
its caller). The session opens in the process and thread that raised, in its frames, and the
framework goes on once it is continued; with the strategy switched off, nothing opens. The
hub's "uncaught exceptions" breakpoint stops there too. Real
frameworks from PyPI: dev/test runs these in build/venv-frameworks; where the frameworks are not
installed they skip."""

import os
import signal
import urllib.error

import pexpect
import pytest

from conftest import PROMPT, expect_all, finish, line_of, plain, program
from test_post_mortem import hub_with
from test_supervisors import (FRAMEWORKS, Request, end_server, free_port, send_task,
                              start_celery, stay_paused_and_answer)
from test_supervisors import nothing_left  # noqa: F401 (autouse: no server outlives a test)

DIVIDE = "# line: divide"


def no_post_mortem_in(run):
    transcript = plain(run.logfile_read.getvalue())
    assert "post-mortem" not in transcript and "(Pdb)" not in transcript


# --- Flask ----------------------------------------------------------------------------------


def start_flask(dpdb, env=None, options=("--post-mortem",)):
    """Flask's development server (werkzeug, threaded) under `dpdb run --post-mortem`:
    (run, port)."""
    pytest.importorskip("flask")
    port = free_port()
    run = dpdb.spawn("dpdb", "run", *options, "-m", "flask", "--app", "wsgi_app", "run",
                     "--port", str(port), cwd=FRAMEWORKS, env=env)
    run.expect(r"Running on http://127\.0\.0\.1:%d" % port)
    return run, port


def look_at_the_view_and_continue(run, app, framework):
    """The session of a view that raised: in the server's thread that served the request, at the
    failing line, with its locals; `c` hands the exception back to the framework."""
    line = line_of(os.path.join(FRAMEWORKS, app), DIVIDE)
    attached = expect_all(
        run, r"attached to session \d+: pid \d+[^\r\n]*, thread ([^\r\n]+?), at %s:%d "
        r"in ratio\(\)" % (app.replace(".", r"\."), line),
        r"%s: post-mortem of ZeroDivisionError in GET /ratio/5 \(%s answers it with a 500 "
        r"once you continue\)" % (framework.lower(), framework))[0]
    assert attached.group(1) != "MainThread"
    run.expect(PROMPT)
    run.sendline("p total, rows")
    run.expect(r"\(10, 5\)")
    run.expect(PROMPT)
    run.sendline("c")


def end_server_by_signal(run):
    # SIGTERM to dpdb goes on to the program, as a service manager's would.
    run.kill(signal.SIGTERM)
    run.expect(pexpect.EOF)
    run.close()


def test_a_flask_view_that_raises_opens_a_session_in_the_request_thread(dpdb):
    run, port = start_flask(dpdb)
    request = Request("http://127.0.0.1:%d/ratio/5" % port)
    look_at_the_view_and_continue(run, "wsgi_app.py", "Flask")
    # Flask's own handling goes on: it logs the exception and answers 500.
    run.expect(r"ERROR in app: Exception on /ratio/5 \[GET\]")
    answer = request.answer()
    assert isinstance(answer, urllib.error.HTTPError) and answer.code == 500, answer
    end_server_by_signal(run)


def test_without_the_flask_strategy_a_view_just_answers_500(dpdb):
    run, port = start_flask(dpdb, env={"DPDB_POST_MORTEM_HOOKS": "-flask"})
    answer = Request("http://127.0.0.1:%d/ratio/5" % port).answer()
    assert isinstance(answer, urllib.error.HTTPError) and answer.code == 500, answer
    run.expect(r"ERROR in app: Exception on /ratio/5 \[GET\]")
    no_post_mortem_in(run)
    end_server_by_signal(run)


def test_the_hubs_uncaught_exception_breakpoint_stops_in_a_flask_view(dpdb):
    """For a server, the exception its framework catches is the uncaught one: the hub's
    "uncaught exceptions" breakpoint (an IDE's `uncaught` filter) stops where --post-mortem
    would, and the request still gets its 500."""
    env = hub_with(dpdb, "uncaught exceptions")
    run, port = start_flask(dpdb, env=env, options=())
    request = Request("http://127.0.0.1:%d/ratio/5" % port)
    look_at_the_view_and_continue(run, "wsgi_app.py", "Flask")
    answer = request.answer()
    assert isinstance(answer, urllib.error.HTTPError) and answer.code == 500, answer
    end_server_by_signal(run)


# --- Django ---------------------------------------------------------------------------------


def test_a_django_view_that_raises_opens_a_session_in_the_request_thread(dpdb):
    pytest.importorskip("django")
    port = free_port()
    app = os.path.join(FRAMEWORKS, "django_app.py")
    run = dpdb.spawn("dpdb", "run", "--post-mortem", app, "runserver", "--noreload",
                     "127.0.0.1:%d" % port, cwd=FRAMEWORKS)
    run.expect(r"Starting (WSGI )?development server at http://127\.0\.0\.1:%d/" % port)
    request = Request("http://127.0.0.1:%d/ratio/5" % port)
    look_at_the_view_and_continue(run, "django_app.py", "Django")
    # Django's own handling goes on: it answers 500 (the server logs the request).
    run.expect(r"GET /ratio/5 HTTP/1\.1\" 500")
    answer = request.answer()
    assert isinstance(answer, urllib.error.HTTPError) and answer.code == 500, answer
    end_server_by_signal(run)


# --- Celery ---------------------------------------------------------------------------------


def test_a_celery_task_that_raises_opens_a_session_in_its_pool_worker(dpdb):
    run, main, env = start_celery(dpdb, options=["--post-mortem"])
    send_task(dpdb, env, "ratio")
    line = line_of(os.path.join(FRAMEWORKS, "tasks.py"), DIVIDE)
    attached = expect_all(
        run, r"attached to session \d+: pid (\d+) ForkPoolWorker-1[^\r\n]*, at tasks\.py:%d in "
        r"ratio\(\)" % line,
        r"celery: post-mortem of ZeroDivisionError in task tasks\.ratio\[[-0-9a-f]+\] \(the "
        r"worker logs the failure and takes its next task once you continue\)")[0]
    worker = int(attached.group(1))
    # Past the task's time limits too: the pool holds them while the worker is paused.
    stay_paused_and_answer(run)
    run.sendline("c")
    run.expect(r"Task tasks\.ratio\[[-0-9a-f]+\] raised unexpected: ZeroDivisionError")
    assert "Hard time limit" not in plain(run.logfile_read.getvalue())
    end_server(run, main, worker)


# --- joblib / loky --------------------------------------------------------------------------


JOBLIB_JOB = os.path.join(FRAMEWORKS, "joblib_job.py")


def test_a_joblib_task_that_raises_opens_a_session_in_its_loky_worker(dpdb):
    pytest.importorskip("joblib")
    run = dpdb.spawn("dpdb", "run", "--post-mortem", JOBLIB_JOB)
    run.expect(r"main pid (\d+)")
    main = int(run.match.group(1))
    attached = expect_all(
        run, r"attached to session \d+: pid (\d+)[^\r\n]*, at joblib_job\.py:%d in share\(\)"
        % line_of(JOBLIB_JOB, DIVIDE),
        r"loky: post-mortem of ZeroDivisionError in the worker that ran share \(the caller gets "
        r"the exception once you continue\)")[0]
    worker = int(attached.group(1))
    assert worker != main
    run.expect(PROMPT)
    run.sendline("p total, rows, __import__('os').getpid() == %d" % worker)
    run.expect(r"\(10, 5, True\)")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("the caller got ZeroDivisionError")
    finish(run, 0)
    # The caller caught it: no session of its own.
    assert plain(run.logfile_read.getvalue()).count("post-mortem of") == 1


def test_without_the_loky_strategy_the_worker_opens_nothing(dpdb):
    pytest.importorskip("joblib")
    run = dpdb.spawn("dpdb", "run", "--post-mortem", JOBLIB_JOB,
                     env={"DPDB_POST_MORTEM_HOOKS": "-loky"})
    run.expect("the caller got ZeroDivisionError")
    finish(run, 0)
    no_post_mortem_in(run)
