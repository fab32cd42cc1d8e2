"""`dpdb run --post-mortem -m pytest`: pytest catches a failing test's exception itself, so no
excepthook sees it; dpdb's plugin opens the session where the test failed, in the process that
ran it (an xdist worker too), and pytest reports the failure once the session is continued."""

import os
import sys

import pytest

from conftest import PROMPT, expect_all, finish, line_of, plain, program

SUITE = program(os.path.join("failing_suite", "checks.py"))
DIVIDE = line_of(SUITE, "# line: divide")


def run_suite(dpdb, *options, env=None):
    return dpdb.spawn("dpdb", "run", "--post-mortem", "--python", sys.executable, "-m", "pytest",
                      "-q", "--color=no", "-p", "no:cacheprovider", *options,
                      SUITE, env=env)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_failing_test_opens_a_session_where_it_failed(dpdb, workers):
    if workers:
        pytest.importorskip("xdist")
    run = run_suite(dpdb, *(["-n", str(workers)] if workers else []))
    # The notice that a session is there comes at the end of a line of the program's, which
    # pytest's progress (".sF") has not ended yet: in either order.
    attached = expect_all(
        run, r"attached to session \d+: pid \d+([^,\r\n]*), [^\r\n]*at checks\.py:%d in "
        r"test_fails\(\)" % DIVIDE,
        r"pytest: post-mortem of ZeroDivisionError in \S*checks\.py::test_fails \(pytest "
        r"reports it once you continue\)",
        r"-> assert rows\[0\] / rows\[1\] > 1")[0]
    if workers:  # in the xdist worker that ran the test
        assert attached.group(1).strip().startswith("gw"), attached.group(1)
    run.expect(PROMPT)
    run.sendline("p rows")
    run.expect(r"\[3, 0\]")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect(r"1 failed, 1 passed, 1 skipped")
    finish(run, 1)
    # The skip and the passing test opened nothing.
    assert plain(run.logfile_read.getvalue()).count("pytest: post-mortem of") == 1


def test_with_the_strategy_off_pytest_just_reports_the_failure(dpdb):
    run = run_suite(dpdb, env={"DPDB_POST_MORTEM_HOOKS": "-pytest"})
    run.expect(r"1 failed, 1 passed, 1 skipped")
    finish(run, 1)
    transcript = plain(run.logfile_read.getvalue())
    assert "post-mortem" not in transcript and "(Pdb)" not in transcript
