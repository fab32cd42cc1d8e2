"""dpdb run --post-mortem: an uncaught exception opens a post-mortem session in the process it
happened in, at the line that raised, before that thread or process dies. The hub's exception
breakpoints (`dpdb break 'uncaught exceptions'`, 'raised exceptions': an IDE's exception filters)
do it for every process of a hub."""

import os
import sys

import pytest

from conftest import PROMPT, expect_all, finish, line_of, plain, program

PROGRAM = program("postmortem.py")
RAISE = line_of(PROGRAM, "# line: raise")


@pytest.mark.parametrize("where", ["main", "thread", "child"])
def test_uncaught_exception_opens_a_post_mortem_session(dpdb, where):
    run = dpdb.spawn("dpdb", "run", "--post-mortem", PROGRAM, where)
    main, attached, notice = expect_all(
        run, r"main pid (\d+)\r\n",
        r"attached to session (\d+): pid (\d+)[^\r\n]*, thread (\S+), at postmortem\.py:%d in "
        r"fail\(\)" % RAISE,
        r"uncaught ValueError in pid (\d+); opening a post-mortem session",
        r"postmortem\.py\(%d\)fail\(\)\r\n-> raise ValueError\(detail\)" % RAISE)[:3]
    sid, pid, thread = int(attached.group(1)), int(attached.group(2)), attached.group(3)
    assert int(notice.group(1)) == pid
    if where == "child":
        assert pid != int(main.group(1))
    else:
        assert pid == int(main.group(1))
        assert thread == ("doomed" if where == "thread" else "MainThread")
    run.expect(PROMPT)

    listing = dpdb.ls()
    [session] = [s for s in listing["sessions"] if s["sid"] == sid]
    assert session["reason"] == "post-mortem" and session["line"] == RAISE

    # The frames of the traceback are there to look at.
    run.sendline("p detail")
    run.expect("'failure in %s'" % where)
    run.expect(PROMPT)
    run.sendline("w")
    run.expect(r"-> raise ValueError\(detail\)")
    run.expect(PROMPT)
    run.sendline("c")
    if where == "main":
        finish(run, 1)  # the exception still ends the program, with its traceback
        assert "ValueError: failure in main" in plain(run.logfile_read.getvalue())
    elif where == "thread":
        expect_all(run, "thread joined", "main done")
        finish(run, 0)
    else:
        expect_all(run, "child exit 1", "main done")
        finish(run, 0)


def test_without_post_mortem_an_exception_just_ends_the_program(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM, "main")
    finish(run, 1)
    transcript = plain(run.logfile_read.getvalue())  # 3.13 colours tracebacks
    assert "ValueError: failure in main" in transcript
    assert "post-mortem" not in transcript and "(Pdb)" not in transcript


def hub_with(dpdb, spec):
    """A standalone hub holding one exception breakpoint (`dpdb break 'uncaught exceptions'`);
    the environment that joins it."""
    socket = os.path.join(dpdb.root, "hub.sock")
    env = {"DPDB_HUB": "unix:" + socket}
    dpdb.spawn("dpdb", "hub", "--socket", socket).expect("dpdb hub listening")
    added = dpdb.run("dpdb", "break", spec, env=env)
    assert added.returncode == 0, added.stderr
    return env


@pytest.mark.parametrize("where", ["main", "child"])
def test_the_hubs_uncaught_exception_breakpoint(dpdb, where):
    """What an IDE's `uncaught` filter sets, from a terminal: --post-mortem for the whole hub."""
    env = hub_with(dpdb, "uncaught exceptions")
    run = dpdb.spawn("dpdb", "run", PROGRAM, where, env=env)
    expect_all(run, r"uncaught ValueError in pid \d+; opening a post-mortem session",
               r"postmortem\.py\(%d\)fail\(\)\r\n-> raise ValueError\(detail\)" % RAISE)
    run.expect(PROMPT)
    run.sendline("p detail")
    run.expect("'failure in %s'" % where)
    run.expect(PROMPT)
    run.sendline("c")
    if where == "main":
        finish(run, 1)
    else:
        expect_all(run, "child exit 1", "main done")
        finish(run, 0)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="raised exceptions need 3.12+")
def test_the_hubs_raised_exception_breakpoint(dpdb):
    """A stop at the raise, before any handler runs; `c` lets the exception go on."""
    env = hub_with(dpdb, "raised exceptions")
    run = dpdb.spawn("dpdb", "run", PROGRAM, "main", env=env)
    expect_all(run, "ValueError: failure in main",
               r"postmortem\.py\(%d\)fail\(\)\r\n-> raise ValueError\(detail\)" % RAISE)
    run.expect(PROMPT)
    listing = dpdb.ls(env=env)
    assert [s["reason"] for s in listing["sessions"]] == ["exception"], listing["sessions"]
    run.sendline("c")
    finish(run, 1)  # nothing caught it: it ends the program, with its traceback
    assert "post-mortem" not in plain(run.logfile_read.getvalue())
