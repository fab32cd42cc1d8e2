"""Django's `runserver` with its autoreloader under `dpdb run`: the reloader waits for the child
that serves in os.waitpid, where no pause lands. Ctrl-C pauses the child at once; once it is
continued, a SIGTERM to the reloader ends both as without dpdb (Django's handler exits, no
session opens in it); after `q`, Ctrl-C ends the server. Real Django from PyPI: dev/test runs
this in build/venv-frameworks; elsewhere it skips."""

import os
import signal

import pytest

from conftest import PROMPT, finish, plain
from test_supervisors import FRAMEWORKS, free_port
from test_supervisors import nothing_left  # noqa: F401 (autouse: no server outlives a test)

HEADER = "Program interrupted by Ctrl-C"


def parent_of(pid):
    with open("/proc/%d/stat" % pid) as stat:
        return int(stat.read().rpartition(")")[2].split()[1])


def serve_and_pause(dpdb):
    """runserver with its reloader, paused by Ctrl-C in the child that serves: (run, the
    reloader's pid, the child's pid)."""
    pytest.importorskip("django")
    port = free_port()
    run = dpdb.spawn("dpdb", "run", "django_app.py", "runserver", "127.0.0.1:%d" % port,
                     cwd=FRAMEWORKS)
    run.expect(r"Starting (WSGI )?development server at http://127\.0\.0\.1:%d/" % port)
    run.sendintr()
    run.expect(r"attached to session \d+: pid (\d+)[^\r\n]*, thread MainThread")
    child = int(run.match.group(1))
    reloader = parent_of(child)
    assert parent_of(reloader) == run.pid  # the session is the serving child's, not the reloader's
    run.expect_exact(HEADER)
    run.expect(PROMPT)
    return run, reloader, child


def test_ctrl_c_pauses_the_child_that_serves_and_sigterm_ends_both(dpdb):
    run, reloader, child = serve_and_pause(dpdb)
    run.sendline("c")
    os.kill(reloader, signal.SIGTERM)
    finish(run, 0)
    assert plain(run.logfile_read.getvalue()).count(HEADER) == 1


def test_after_q_ctrl_c_ends_the_server(dpdb):
    run, reloader, child = serve_and_pause(dpdb)
    run.sendline("q")
    run.expect(r"no longer debugging process %d" % child)
    run.sendintr()
    finish(run, 0)
    assert plain(run.logfile_read.getvalue()).count(HEADER) == 1
