"""`dpdb run --post-mortem -m pytest`: pytest catches a failing test's exception itself, so no
excepthook sees it; dpdb's plugin opens the session where the test failed, in the process that
ran it (an xdist worker too), and pytest reports the failure once the session is continued. The
hub's "uncaught exceptions" breakpoint stops there too."""

import os
import sys

import pytest

from conftest import PROMPT, expect_all, finish, line_of, plain, program
from test_post_mortem import hub_with

SUITE = program(os.path.join("failing_suite", "checks.py"))
DIVIDE = line_of(SUITE, "# line: divide")


def run_suite(dpdb, *options, env=None, post_mortem=("--post-mortem",)):
    return dpdb.spawn("dpdb", "run", *post_mortem, "--python", sys.executable, "-m", "pytest",
                      "-q", "--color=no", "-p", "no:cacheprovider", *options,
                      SUITE, env=env)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_failing_test_opens_a_session_where_it_failed(dpdb, workers):
    if workers:
        pytest.importorskip("xdist")
    run = run_suite(dpdb, *(["-n", str(workers)] if workers else []))
    attached = look_at_the_failure_and_continue(run)
    if workers:  # in the xdist worker that ran the test
        assert attached.group(1).strip().startswith("gw"), attached.group(1)


def test_the_hubs_uncaught_exception_breakpoint_stops_where_a_test_failed(dpdb):
    """What an IDE's `uncaught` filter sets: a failing test is the uncaught exception."""
    run = run_suite(dpdb, env=hub_with(dpdb, "uncaught exceptions"), post_mortem=())
    look_at_the_failure_and_continue(run)


def look_at_the_failure_and_continue(run):
    """The failing test's session and its locals, then pytest's report; the session's match."""
    # The notice that a session is there comes at the end of a line of the program's, which
    # pytest's progress (".sF") has not ended yet: in either order.
    attached = expect_all(
        run, r"attached to session \d+: pid \d+([^,\r\n]*), [^\r\n]*at checks\.py:%d in "
        r"test_fails\(\)" % DIVIDE,
        r"pytest: post-mortem of ZeroDivisionError in \S*checks\.py::test_fails \(pytest "
        r"reports it once you continue\)",
        r"-> assert rows\[0\] / rows\[1\] > 1")[0]
    run.expect(PROMPT)
    run.sendline("p rows")
    run.expect(r"\[3, 0\]")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect(r"1 failed, 1 passed, 1 skipped")
    finish(run, 1)
    # The skip and the passing test opened nothing.
    assert plain(run.logfile_read.getvalue()).count("pytest: post-mortem of") == 1
    return attached


def test_with_the_strategy_off_pytest_just_reports_the_failure(dpdb):
    run = run_suite(dpdb, env={"DPDB_POST_MORTEM_HOOKS": "-pytest"})
    run.expect(r"1 failed, 1 passed, 1 skipped")
    finish(run, 1)
    transcript = plain(run.logfile_read.getvalue())
    assert "post-mortem" not in transcript and "(Pdb)" not in transcript
