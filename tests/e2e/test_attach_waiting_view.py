"""dpdb attach -p of a program whose main thread waits in C code (a sleep, a recv): the session
comes at once, over the frames of the thread as it waits, read by a thread of dpdb's. `where`,
`up`, `down`, `p`, `pp`, `list`, `display` and `interact` read them; `n` waits for the wait to
end, and the stop at the thread's next line then continues the same session; `c` and `q` leave
the thread waiting, with nothing armed."""

import re
import signal

import pexpect
import pytest

from conftest import PROMPT, TIMEOUT, finish
from test_attach_waiting import (  # noqa: F401  (waiting: a fixture)
    WAITING, attach_no_pause, continue_detach_and_wake, detach, pause_notice, waiting)

# The line the main thread waits on, shown where the view opens: the lambda of waiting.py's mode.
WAITING_LINE = r"waiting\.py\(\d+\)<lambda>\(\)\r\n-> return lambda: [^\r\n]*# waits here"


def open_view(dpdb, program_, mode):
    session = dpdb.spawn("dpdb", "attach", "-p", str(program_.pid))
    session.expect(pause_notice(mode, program_.pid))
    session.expect("its session shows it as it waits; it stops at its next Python line")
    session.expect(r"attached to session \d+: pid %d" % program_.pid)
    session.expect("Paused by dpdb while the main thread waits in C code")
    session.expect(WAITING_LINE)
    session.expect(PROMPT)
    return session


def command(session, line, *expected):
    session.sendline(line)
    for text in expected:
        session.expect(text)
    session.expect(PROMPT)


@pytest.mark.parametrize("mode", ["sleep", "recv"])
def test_the_frames_of_a_waiting_main_thread_are_read_at_once_then_its_stop_takes_over(
        dpdb, waiting, mode):
    program_ = waiting(mode)
    session = open_view(dpdb, program_, mode)
    command(session, "where", r"<module>\(\)\r\n-> wait\(\)", r"\r\n> [^\r\n]*" + WAITING_LINE)
    if mode == "recv":  # the lambda's own variable: the socket it reads
        command(session, "p mine", r"<socket\.socket [^\r\n]*>")
    command(session, "up", r"<module>\(\)\r\n-> wait\(\)")
    command(session, "p mode", re.escape(repr(mode)))
    # (B: the pause's breakpoints, on every line of the thread's frames, where pdb lists them.)
    command(session, "list", r"\s\d+\s+B?->\s+wait\(\)")
    command(session, "pp {'mode': mode}", re.escape("{'mode': %r}" % mode))
    command(session, "display mode", re.escape("display mode: %r" % mode))
    command(session, "down", WAITING_LINE)
    # interact reads the frames too; what it assigns stays in its own namespace. Its Ctrl-D comes
    # as soon as the prompt shows, as a quick user's would.
    session.sendline("interact")
    session.expect(r"\*(pdb interact start|interactive)\*")  # (3.9-3.12: interactive)
    session.expect(">>> ")
    session.sendline("mode")
    session.expect(re.escape(repr(mode)))
    session.expect(">>> ")
    session.sendline("x = 1")
    session.expect(r"x = 1\r\n[^\r\n]*>>> ")
    session.sendeof()
    session.expect(PROMPT)
    command(session, "p 'x' in locals()", r"\r\nFalse\r\n")

    # A step needs the thread to run: it waits for the wait to end, then stops at the thread's
    # next line, in the same session.
    session.sendline("n")
    session.expect("The thread still waits in C code: it stops at its next Python line")
    program_.wake()
    session.expect("The wait ended: paused by dpdb at the thread's next line")
    session.expect(r"waiting\.py\(\d+\)<module>\(\)")
    session.expect(PROMPT)
    # Now in the main thread itself.
    command(session, "p __import__('threading').current_thread().name", "'MainThread'")
    continue_detach_and_wake(dpdb, session, program_)


@pytest.mark.parametrize("leave", ["c", "q"])
def test_c_or_q_in_the_view_leave_the_thread_waiting_with_no_pause_armed(dpdb, waiting, leave):
    program_ = waiting("sleep")
    session = open_view(dpdb, program_, "sleep")
    session.sendline(leave)
    session.expect("The pause is taken back" if leave == "c" else "no longer debugging")
    finish(session)
    # A pause still armed would stop it on the line after the wait, before it says so.
    program_.wake()
    program_.expect("woken")
    if leave == "c":
        detach(dpdb, program_.pid)
    program_.terminate()


def test_ctrl_c_while_a_step_waits_comes_back_to_the_view(dpdb, waiting):
    program_ = waiting("sleep")
    session = open_view(dpdb, program_, "sleep")
    session.sendline("s")
    session.expect("Waiting for that")
    session.sendintr()
    session.expect("--KeyboardInterrupt--")
    session.expect(PROMPT)
    command(session, "where", WAITING_LINE)
    session.sendline("q")
    finish(session)
    program_.wake()
    program_.expect("woken")
    program_.terminate()


def test_dpdb_pause_all_threads_of_a_pool_shows_each_waiting_thread_at_once(dpdb, waiting):
    program_ = waiting("pool")
    attach_no_pause(dpdb, program_.pid)
    paused = dpdb.run("dpdb", "pause", "--all-threads", str(program_.pid))
    assert paused.returncode == 0, paused.stderr
    # Every thread waits (the main thread and its 4 workers): each is a session while it waits.
    names = {"MainThread"} | {"worker-%d" % number for number in range(4)}
    listing = dpdb.wait_ls(lambda listing: {s["thread"] for s in listing["sessions"]} == names)
    assert {s["reason"] for s in listing["sessions"]} == {"waiting"}, listing["sessions"]
    # Let go: nothing stays armed, the main thread's next wait ends with no stop.
    detach(dpdb, program_.pid)
    program_.wake()
    program_.expect("woken")
    program_.terminate()


def test_attach_all_threads_of_a_pool_opens_on_the_main_thread_with_each_workers_session_a_switch_away(
        dpdb, waiting):
    program_ = waiting("pool")
    session = dpdb.spawn("dpdb", "attach", "-p", str(program_.pid), "--all-threads")
    session.expect("4 other threads of pid %d paused too: `sessions` lists them, `switch N` goes "
                   "to one" % program_.pid)
    session.expect(r"attached to session \d+: pid %d" % program_.pid)
    session.expect("Paused by dpdb while the main thread waits in C code")
    session.expect(r"-> waiter\.acquire\(\)")  # in never.wait(), as every worker
    session.expect(PROMPT)
    command(session, "where", r"\r\n-> return lambda: never\.wait\(\)  # waits here")
    listing = dpdb.ls()
    sids = {s["thread"]: s["sid"] for s in listing["sessions"]}
    assert set(sids) == {"MainThread"} | {"worker-%d" % n for n in range(4)}, listing["sessions"]
    assert {s["reason"] for s in listing["sessions"]} == {"waiting"}, listing["sessions"]
    command(session, "sessions", *(r"\r\n%d +%d [^\r\n]*%s " % (sid, program_.pid, name)
                                   for name, sid in sorted(sids.items(), key=lambda s: s[1])))
    for number in range(4):
        name = "worker-%d" % number
        session.sendline("switch %d" % sids[name])
        session.expect(r"attached to session %d: pid %d" % (sids[name], program_.pid))
        session.expect("Paused by dpdb while thread %s waits in C code" % name)
        session.expect(PROMPT)
        command(session, "where", r"-> waiter\.acquire\(\)")
    session.sendline("q")
    finish(session)
    # Nothing stays armed or open: no session, and the main thread's next wait ends with no stop.
    dpdb.wait_ls(lambda listing: not listing["sessions"])
    program_.wake()
    program_.expect("woken")
    program_.terminate()


@pytest.mark.parametrize("mode", ["sleep", "recv"])
def test_interrupt_ends_the_main_threads_wait_through_the_programs_sigint_handler(
        dpdb, waiting, mode):
    program_ = waiting(mode)
    session = open_view(dpdb, program_, mode)
    session.sendline("interrupt")
    session.expect("SIGINT sent to the main thread")
    # The program's handler (Python's default) raised in the waiting call: the thread stops at
    # its next line, the except clause that does not take a KeyboardInterrupt.
    session.expect("The wait ended: paused by dpdb at the thread's next line")
    session.expect(r"waiting\.py\(\d+\)<module>\(\)\r\n-> except Woken:")
    session.expect(PROMPT)
    command(session, "p __import__('sys').exc_info()[0].__name__", "'KeyboardInterrupt'")
    session.sendline("c")
    finish(session)
    # Uncaught, it ends the program as Ctrl-C would have: by SIGINT.
    assert program_.process.wait(timeout=TIMEOUT) == -signal.SIGINT


def test_interrupt_in_the_view_of_a_worker_thread_says_why_it_cannot_end_its_wait(
        dpdb, waiting):
    program_ = waiting("pool")
    attach_no_pause(dpdb, program_.pid)
    paused = dpdb.run("dpdb", "pause", "--all-threads", str(program_.pid))
    assert paused.returncode == 0, paused.stderr
    listing = dpdb.wait_ls(lambda listing: any(s["thread"] == "worker-0"
                                               for s in listing["sessions"]))
    (worker,) = [s for s in listing["sessions"] if s["thread"] == "worker-0"]
    session = dpdb.spawn("dpdb", "attach", str(worker["sid"]))
    session.expect("Paused by dpdb while thread worker-0 waits in C code")
    session.expect("'interrupt' ends the wait now where it can, not here: only the main thread "
                   "takes signals")
    session.expect(PROMPT)
    command(session, "interrupt", "The wait cannot be ended from here: only the main thread "
            "takes signals, and worker-0 is another")
    command(session, "where", r"-> waiter\.acquire\(\)")
    session.sendline("q")
    finish(session)
    program_.wake()
    program_.expect("woken")
    program_.terminate()


def test_interrupt_under_dpdb_run_reaches_the_programs_handler_not_dpdbs_ctrl_c(dpdb):
    # Under dpdb run, dpdb's Ctrl-C pause has the program's SIGINT: interrupt's goes past it.
    child = dpdb.spawn("dpdb", "run", WAITING, "sleep")
    child.expect(r"ready (\d+)")
    pid = int(child.match.group(1))
    paused = dpdb.run("dpdb", "pause", str(pid))
    assert paused.returncode == 0, paused.stderr
    child.expect("Paused by dpdb while the main thread waits in C code")
    child.expect(PROMPT)
    child.sendline("interrupt")
    child.expect("The wait ended: paused by dpdb at the thread's next line")
    child.expect(r"-> except Woken:")
    child.expect(PROMPT)
    command(child, "p __import__('sys').exc_info()[0].__name__", "'KeyboardInterrupt'")
    child.sendline("c")
    child.expect("KeyboardInterrupt")
    child.expect(pexpect.EOF)
