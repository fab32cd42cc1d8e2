"""Threads: each paused thread is a session of its own, and while one waits at its prompt the
process's other threads keep running."""

import os

from conftest import PROMPT, expect_all, finish, program, stop_line


def test_each_paused_thread_is_a_session_and_others_run(dpdb):
    fifo = os.path.join(dpdb.root, "lines")
    os.mkfifo(fifo)
    child = dpdb.spawn("dpdb", "run", program("threads.py"), fifo)
    attached, paused = expect_all(
        child, r"attached to session (\d+): pid (\d+) [^\r\n]*, thread worker-(a|b),",
        r"session (\d+) paused: pid (\d+)", stop_line("say"))[:2]
    first, pid, first_name = int(attached.group(1)), int(attached.group(2)), attached.group(3)
    second = int(paused.group(1))
    assert int(paused.group(2)) == pid and second != first
    second_name = "b" if first_name == "a" else "a"
    child.expect(PROMPT)

    # Two sessions of one process, one per thread.
    listing = dpdb.wait_ls(lambda listing: len(listing["sessions"]) == 2)
    sessions = {s["sid"]: s for s in listing["sessions"]}
    assert {s["pid"] for s in sessions.values()} == {pid}
    assert sessions[first]["thread"] == "worker-" + first_name
    assert sessions[second]["thread"] == "worker-" + second_name
    assert sessions[first]["tid"] != sessions[second]["tid"]
    assert sessions[first]["attached"] and not sessions[second]["attached"]
    for session in sessions.values():  # where and since when each one waits
        assert session["file"] == program("threads.py") and session["function"] == "work"
        assert isinstance(session["line"], int) and isinstance(session["since"], (int, float))

    with open(fifo, "w") as lines:
        # Nothing is typed at the prompt: the counter thread still gets each line and says so.
        lines.write("one\n")
        lines.flush()
        child.expect(r"tick 1 one")
        child.sendline("p counter, value")
        child.expect(r"\(1, '%s'\)" % first_name.upper())
        child.expect(PROMPT)
        child.sendline("c")
        # The other thread's session comes next, in the same terminal.
        expect_all(child, "%s done with" % first_name,
                   r"attached to session %d: pid %d [^\r\n]*, thread worker-%s,"
                   % (second, pid, second_name))
        child.expect(PROMPT)
        lines.write("two\n")
        lines.flush()
        child.expect(r"tick 2 two")
        child.sendline("p counter, value")
        child.expect(r"\(2, '%s'\)" % second_name.upper())
        child.expect(PROMPT)
        child.sendline("c")
        child.expect("%s done with" % second_name)
    # Closing the FIFO ends the counter thread, and then the program.
    expect_all(child, "counter finished at 2", "main done")
    finish(child, 0)
