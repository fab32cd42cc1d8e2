"""Session life: detach leaves the thread paused and listed, anyone may attach again (finding the
hub by themselves), a client that dies leaves the session as it was, `c` keeps breakpoints armed,
`q` lets the program run on; and the errors of `dpdb attach` and `dpdb ls`."""

import os
import signal
import subprocess
import time

import pytest


from conftest import DPDB, PROMPT, expect_all, finish, plain, program, stop, stop_line, wait_until

PROGRAM = program("sessions.py")


def first_stop(child):
    """Waits for the run's first stop; returns (session, pid)."""
    attached, main = expect_all(child, r"attached to session (\d+): pid (\d+)",
                                r"main pid (\d+)\r\n", stop_line("results"))[:2]
    assert attached.group(2) == main.group(1)
    child.expect(PROMPT)
    return int(attached.group(1)), int(main.group(1))


def session(listing, sid):
    found = [s for s in listing["sessions"] if s["sid"] == sid]
    return found[0] if found else None


def detached(dpdb, sid):
    """The listing once the hub shows session sid paused with nobody attached."""
    return dpdb.wait_ls(lambda listing: session(listing, sid) is not None
                        and not session(listing, sid)["attached"])


def check_still_paused(dpdb, sid, pid):
    listing = detached(dpdb, sid)
    paused = session(listing, sid)
    assert paused["pid"] == pid and paused["function"] == "main"
    assert sid in {p["pid"]: p for p in listing["processes"]}[pid]["sessions"]


def attach(dpdb, sid, *extra):
    # No DPDB_HUB: the client finds the run's hub in the runtime directory.
    assert "DPDB_HUB" not in dpdb.env
    other = dpdb.spawn("dpdb", "attach", str(sid), *extra)
    other.expect(r"attached to session %d: pid \d+" % sid)
    # A client that comes later is shown where the thread stands.
    other.expect(r"sessions\.py\(\d+\)main\(\)\r\n" + stop_line("results"))
    other.expect(PROMPT)
    return other


def continue_to_end(child, sid, run=None):
    """`c` at the last stop; the run's terminal (child itself if not given) shows the program
    finish, and both commands end."""
    child.sendline("c")
    if run is None:
        expect_all(child, r"results \[0, 10, 20\]", "program done")
    else:
        child.expect("session %d continued" % sid)
        finish(child, 0)  # `dpdb attach N` ends with its session
        expect_all(run, r"results \[0, 10, 20\]", "program done")
    finish(run or child, 0)


def test_detach_command_leaves_session_paused_and_another_terminal_attaches(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    sid, pid = first_stop(run)
    run.sendline("!history.append('from the first client')")
    run.expect(PROMPT)
    run.sendline("detach")
    run.expect(r"detached from session %d; it stays paused \(Ctrl-C here or `dpdb attach %d` "
               r"elsewhere to come back\)" % (sid, sid))
    check_still_paused(dpdb, sid, pid)

    other = attach(dpdb, sid)
    other.sendline("p first, history")
    other.expect(r"\('first stop', \['from the first client'\]\)")
    other.expect(PROMPT)
    other.sendline("!history.clear()")
    other.expect(PROMPT)
    continue_to_end(other, sid, run)


def run_and_detach(dpdb, detach):
    """`dpdb run` at its first stop, detached from it by detach(run); (run, sid, pid)."""
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    sid, pid = first_stop(run)
    detach(run)
    run.expect(r"detached from session %d; it stays paused" % sid)
    check_still_paused(dpdb, sid, pid)
    return run, sid, pid


def test_ctrl_c_in_the_run_terminal_comes_back_to_a_detached_session(dpdb):
    run, sid, pid = run_and_detach(dpdb, lambda run: run.sendline("detach"))
    run.sendintr()
    run.expect(r"attached to session %d: pid %d" % (sid, pid))
    run.expect(PROMPT)
    run.sendline("p first")
    run.expect("'first stop'")
    run.expect(PROMPT)
    continue_to_end(run, sid)


def test_ctrl_d_detaches_and_attach_comes_back(dpdb):
    run, sid, pid = run_and_detach(dpdb, lambda run: run.sendcontrol("d"))
    # The run's own terminal does not take it back by itself; `dpdb attach` elsewhere does.
    other = attach(dpdb, sid)
    other.sendcontrol("d")
    other.expect(r"detached from session %d" % sid)
    finish(other, 0)
    check_still_paused(dpdb, sid, pid)
    again = attach(dpdb, sid)
    again.sendline("p first")
    again.expect("'first stop'")
    again.expect(PROMPT)
    continue_to_end(again, sid, run)


def test_killed_client_leaves_session_paused_and_reattachable(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    sid, pid = first_stop(run)
    run.sendline("detach")
    run.expect("detached from session %d" % sid)
    doomed = attach(dpdb, sid)
    doomed.sendline("!history.append('before the kill')")
    doomed.expect(PROMPT)
    # Mid-session, with a line half typed.
    doomed.send("p hist")
    doomed.kill(signal.SIGKILL)
    wait_until(lambda: not doomed.isalive(), "the client to die")
    check_still_paused(dpdb, sid, pid)
    assert run.isalive()

    again = attach(dpdb, sid)
    again.sendline("p history")
    again.expect(r"\['before the kill'\]")
    again.expect(PROMPT)
    again.sendline("!history.clear()")
    again.expect(PROMPT)
    continue_to_end(again, sid, run)


def test_continue_keeps_breakpoints_armed(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    sid, _ = first_stop(run)
    run.sendline("b work")
    run.expect(r"Breakpoint 1 at .*sessions\.py:\d+")
    run.expect(PROMPT)
    seen = set()
    for i in range(3):
        run.sendline("c")
        # Each stop is a new session, attached in this same terminal.
        previous = sid
        run.expect(r"attached to session (\d+)")
        sid = int(run.match.group(1))
        assert sid != previous and sid not in seen
        seen.add(sid)
        run.expect(r"-> value = i \* 10")
        run.expect(PROMPT)
        run.sendline("p i")
        run.expect(r"\r\n%d\r\n" % i)
        run.expect(PROMPT)
    run.sendline("b")
    run.expect(r"breakpoint already hit 3 times")
    run.expect(PROMPT)
    run.sendline("cl 1")
    run.expect("Deleted breakpoint 1")
    run.expect(PROMPT)
    continue_to_end(run, sid)


def test_quit_lets_the_program_run_on(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM, "again")
    sid, pid = first_stop(run)
    run.sendline("b work")
    run.expect("Breakpoint 1")
    run.expect(PROMPT)
    run.sendline("q")
    # Neither the breakpoint nor the later breakpoint() in work(2) stops it: it completes.
    expect_all(run, r"no longer debugging process %d; it runs on" % pid,
               r"results \[0, 10, 20\]", "program done")
    finish(run, 0)
    assert "attached to session %d" % (sid + 1) not in run.logfile_read.getvalue()


def test_attach_next_waits_for_the_next_breakpoint(dpdb):
    fifo = os.path.join(dpdb.root, "go")
    os.mkfifo(fifo)
    # The run has no terminal: its sessions wait for a client from elsewhere.
    background = subprocess.Popen([DPDB, "run", PROGRAM, "--wait-for", fifo], env=dpdb.env,
                                  cwd=dpdb.root, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  start_new_session=True)
    try:
        wait_until(lambda: dpdb.run("dpdb", "ls").returncode == 0, "the run's hub")
        waiting = dpdb.spawn("dpdb", "attach", "--next")
        waiting.expect("waiting for the next breakpoint anywhere")
        with open(fifo, "w") as go:
            go.write("go\n")
        waiting.expect(r"attached to session (\d+): pid (\d+)")
        sid = int(waiting.match.group(1))
        waiting.expect(stop_line("results"))
        waiting.expect(PROMPT)
        waiting.sendline("p first")
        waiting.expect("'first stop'")
        waiting.expect(PROMPT)
        waiting.sendline("c")
        waiting.expect("session %d continued" % sid)
        finish(waiting, 0)
        output, _ = background.communicate(timeout=30)
    finally:
        stop(background)
    assert background.returncode == 0
    assert "results [0, 10, 20]" in output and "program done" in output


def test_attach_to_a_missing_session_is_a_one_line_error(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    sid, _ = first_stop(run)
    done = dpdb.run("dpdb", "attach", "99")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "99" in done.stderr, done.stderr
    assert done.stdout == ""
    done = dpdb.run("dpdb", "attach", "nine")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    # The session itself was not disturbed.
    run.sendline("p first")
    run.expect("'first stop'")
    run.expect(PROMPT)
    continue_to_end(run, sid)


def test_no_hub_says_where_it_looked_and_how_to_start_one(dpdb):
    looked = os.path.join(dpdb.env["XDG_RUNTIME_DIR"], "dpdb-%d" % os.getuid())
    for command in (["ls"], ["ls", "--json"], ["attach"], ["attach", "3"]):
        done = dpdb.run("dpdb", *command)
        assert done.returncode != 0, command
        message = plain(done.stderr)
        assert looked in message, (command, message)
        assert "dpdb hub" in message and "dpdb run" in message, (command, message)
        assert message.count("\n") == 1, (command, message)


def test_input_for_a_session_that_ended_never_reaches_another(dpdb):
    run = dpdb.spawn("dpdb", "run", program("dead_prompt.py"))
    run.expect(r"worker 1 pid (\d+)")
    first = int(run.match.group(1))
    run.expect(r"attached to session (\d+): pid %d" % first)
    session = run.match.group(1)
    run.expect(PROMPT)
    run.send("p 'typed at the dead prompt', os.getpid()")  # being typed as the worker dies
    time.sleep(0.2)
    os.kill(first, signal.SIGKILL)
    run.expect(r"session %s process %d went away" % (session, first))
    run.send("\rp 'typed ahead'\r")  # the rest of the line, and more, before the next prompt
    run.expect(r"worker 2 pid (\d+)")
    second = int(run.match.group(1))
    run.expect(r"dropped what was typed for session %s, which ended before it was sent" % session)
    run.expect(PROMPT)
    run.sendline("p os.getpid()")
    run.expect(r"\r\n%d\r\n" % second)
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("worker 2 done")
    run.expect("all done")
    answers = plain(run.logfile_read.getvalue())
    assert "('typed at the dead prompt'," not in answers and "\n'typed ahead'\n" not in answers
    finish(run)


def test_sigterm_to_a_paused_worker_is_told_and_handled_after_continue(dpdb):
    run = dpdb.spawn("dpdb", "run", program("supervised.py"))
    run.expect(r"worker pid (\d+)")
    worker = int(run.match.group(1))
    run.expect(PROMPT)
    os.kill(worker, signal.SIGTERM)
    run.expect(r"SIGTERM arrived: the program's handler runs when the thread resumes \(`c`\)")
    # The handler has not run: the session still answers, in the debugger's own time.
    run.sendline("p stopping")
    run.expect(r"\r\n\[\]\r\n")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("handler ran for SIGTERM")
    run.expect("shut down cleanly")
    finish(run)


@pytest.mark.parametrize("command", ["up", "where"])
def test_a_continued_session_leaves_the_frame_it_stopped_in_to_the_program(dpdb, command):
    # pdb 3.12+ keeps $_frame in the globals of each frame selected and took it out of the
    # last one's only (after an `up`, the frame it stopped in lived on in its module); pdb kept
    # the selected frame's locals and bdb 3.13+ the frame last traced, in the debugger that the
    # engine keeps for its breakpoints.
    child = dpdb.spawn("dpdb", "run", program("released.py"))
    child.expect(stop_line("return watched"))
    child.expect(PROMPT)
    child.sendline(command)
    child.expect(r"-> watched = released_work.hold\(Resource\(\)\)")
    child.expect(PROMPT)
    child.sendline("c")
    child.expect("resource released")
    finish(child)
