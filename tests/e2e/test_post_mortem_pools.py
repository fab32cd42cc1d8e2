"""`dpdb run --post-mortem` where a standard-library process pool's worker catches a task's
exception and sends it to the caller (multiprocessing.Pool's map and apply_async,
concurrent.futures.ProcessPoolExecutor), and in a multiprocessing.Process's target: the session
opens in the worker, at the failing line with its locals; once continued, the caller gets its
exception, with the worker's traceback as the pool sends it, and the pool runs the next task.
With the strategy switched off, nothing opens and the program sees the same. The hub's
"uncaught exceptions" breakpoint stops in the same place. Fork, spawn and forkserver."""

import re

import pytest

from conftest import PROMPT, expect_all, finish, line_of, plain, program
from test_post_mortem import hub_with

POOL_RAISE = program("pool_raise.py")
DIVIDE = line_of(POOL_RAISE, "# line: divide")
SAME_AS_WITHOUT_DPDB = [
    "the caller got ZeroDivisionError (remote traceback through share: True, through dpdb: "
    "False; attributes [])", "the pool still works: 2", "main done"]


def expect_the_worker_session(run, strategy, while_paused=lambda: None):
    """The worker's session and its locals; `c` hands the exception back to the pool. The
    worker's pid."""
    main, attached, _ = expect_all(
        run, r"main pid (\d+)\r\n",
        r"attached to session \d+: pid (\d+)[^\r\n]*, thread MainThread, at pool_raise\.py:%d "
        r"in share\(\)" % DIVIDE,
        r"%s: post-mortem of ZeroDivisionError in the worker that ran share \(the caller gets "
        r"the exception once you continue\)" % strategy)
    worker = int(attached.group(1))
    assert worker != int(main.group(1))
    run.expect(PROMPT)
    run.sendline("p total, rows, __import__('os').getpid() == %d" % worker)
    run.expect(r"\(10, 0, True\)")
    run.expect(PROMPT)
    while_paused()
    run.sendline("c")
    return worker


def expect_the_program_goes_on(run):
    for line in SAME_AS_WITHOUT_DPDB:
        run.expect_exact(line)
    finish(run, 0)
    # The caller caught it: no session of its own.
    assert plain(run.logfile_read.getvalue()).count("post-mortem of") == 1


@pytest.mark.parametrize("kind, method", [
    ("pool-map", "fork"), ("pool-map", "spawn"), ("pool-map", "forkserver"),
    ("pool-apply", "spawn"), ("executor", "fork"), ("executor", "spawn")])
def test_a_task_that_raises_opens_a_session_in_its_pool_worker(dpdb, kind, method):
    run = dpdb.spawn("dpdb", "run", "--post-mortem", POOL_RAISE, kind, method)
    expect_the_worker_session(run, "executor" if kind == "executor" else "pool")
    expect_the_program_goes_on(run)


def test_a_caller_that_does_not_catch_it_gets_a_session_of_its_own(dpdb):
    """The worker's session does not stand for the caller's: the exception it is sent is the
    caller's own, raised where it waited for the task."""
    run = dpdb.spawn("dpdb", "run", "--post-mortem", POOL_RAISE, "pool-uncaught", "spawn")
    expect_the_worker_session(run, "pool")
    main = re.search(r"main pid (\d+)", run.logfile_read.getvalue()).group(1)
    expect_all(run, r"uncaught ZeroDivisionError in pid %s; opening a post-mortem session" % main,
               r"attached to session \d+: pid %s[^\r\n]*, thread MainThread, at pool\.py:\d+ in "
               r"get\(\)" % main)
    run.expect(PROMPT)
    run.sendline("w")
    run.expect(r"pool_raise\.py\(%d\)<module>\(\)" % line_of(POOL_RAISE, "# line: uncaught"))
    run.expect(PROMPT)
    run.sendline("c")
    finish(run, 1)
    assert "main done" not in run.logfile_read.getvalue()


@pytest.mark.parametrize("kind, switch", [("pool-map", "-pool"), ("executor", "-executor"),
                                          ("executor", "off")])
def test_without_the_strategy_the_caller_just_gets_the_exception(dpdb, kind, switch):
    run = dpdb.spawn("dpdb", "run", "--post-mortem", POOL_RAISE, kind, "spawn",
                     env={"DPDB_POST_MORTEM_HOOKS": switch})
    for line in SAME_AS_WITHOUT_DPDB:
        run.expect_exact(line)
    finish(run, 0)
    transcript = plain(run.logfile_read.getvalue())
    assert "post-mortem" not in transcript and "(Pdb)" not in transcript


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_process_target_that_raises_opens_a_session_in_the_child(dpdb, method):
    """multiprocessing.Process's run() catches everything itself (spawn: test_post_mortem)."""
    run = dpdb.spawn("dpdb", "run", "--post-mortem", POOL_RAISE, "process", method)
    main, attached, _ = expect_all(
        run, r"main pid (\d+)\r\n",
        r"attached to session \d+: pid (\d+)[^\r\n]*, at pool_raise\.py:%d in share\(\)" % DIVIDE,
        r"uncaught ZeroDivisionError in pid \d+; opening a post-mortem session")
    assert int(attached.group(1)) != int(main.group(1))
    run.expect(PROMPT)
    run.sendline("p total, rows")
    run.expect(r"\(10, 0\)")
    run.expect(PROMPT)
    run.sendline("c")
    expect_all(run, "child exit 1", "main done")
    finish(run, 0)


@pytest.mark.parametrize("kind, method", [("pool-apply", "fork"), ("executor", "spawn")])
def test_the_hubs_uncaught_exception_breakpoint_stops_in_the_pool_worker(dpdb, kind, method):
    """What an IDE's `uncaught` filter sets, from a terminal: a pool's caught exception is the
    uncaught one of its worker."""
    env = hub_with(dpdb, "uncaught exceptions")
    run = dpdb.spawn("dpdb", "run", POOL_RAISE, kind, method, env=env)

    def the_hub_lists_a_post_mortem_stop():
        [session] = dpdb.ls(env=env)["sessions"]
        assert (session["reason"], session["line"]) == ("post-mortem", DIVIDE), session

    expect_the_worker_session(run, "executor" if kind == "executor" else "pool",
                              the_hub_lists_a_post_mortem_stop)
    expect_the_program_goes_on(run)
