"""The client's prompt: line editing, keys typed ahead of a prompt, completion answered by the
remote pdb, history across runs, Ctrl-C that only clears the line (or interrupts a command that
runs too long), and the terminal's width reaching pp."""

import os
import re
import time

import pytest

from conftest import PROMPT, finish, plain, program, stop_line

PROGRAM = program("console.py")
UP = "\x1b[A"
LEFT = "\x1b[D"


def stopped(dpdb, **kwargs):
    run = dpdb.spawn("dpdb", "run", PROGRAM, **kwargs)
    run.expect(r"attached to session (\d+)")
    run.sid = int(run.match.group(1))
    run.expect(stop_line("return some_variable"))
    run.expect(PROMPT)
    return run


def history_lines(path):
    """libedit's history file: a cookie line, then lines with vis(3) escapes (octal)."""
    with open(path) as f:
        lines = f.read().split("\n")
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line) for line in lines]


def typing_at(dpdb, run, client):
    """The terminal the user types at: the run's own, or `dpdb attach` after the run detached."""
    if client == "run":
        return run
    run.sendline("detach")
    run.expect("detached from session %d" % run.sid)
    user = dpdb.spawn("dpdb", "attach", str(run.sid))
    user.expect("attached to session %d" % run.sid)
    user.expect(PROMPT)
    return user


def continue_to_end(run, user):
    user.sendline("c")
    if user is not run:
        user.expect("continued")
        finish(user, 0)
    run.expect("program done")
    finish(run, 0)


def end(run):
    run.sendline("c")
    run.expect("program done")
    finish(run, 0)


def test_completion_of_locals_attributes_and_commands(dpdb):
    # The line editor shows a completion by moving the cursor and writing the missing part, so
    # each one is checked by what the completed line does: uncompleted, each is an error.
    run = stopped(dpdb)
    run.send("p some_var\t\r")  # a unique local: `p some_var` is a NameError
    run.expect(r"\r\n42\r\n")
    run.expect(PROMPT)
    run.send("p some_\t\t")  # two candidates: their common part, then both listed
    run.expect(r"some_value\s+some_variable\r\n")
    run.send("l\t\r")
    run.expect(r"\r\n'text'\r\n")
    run.expect(PROMPT)
    run.send("p some_value.upp\t()\r")  # an attribute of a remote object
    run.expect(r"\r\n'TEXT'\r\n")
    run.expect(PROMPT)
    run.send("whati\tsome_value\r")  # a command name
    run.expect(r"\r\n<class 'str'>\r\n")
    run.expect(PROMPT)
    run.send("b mai\t\r")  # a function name, for break
    run.expect(r"Breakpoint 1 at .*console\.py:\d+")
    run.expect(PROMPT)
    transcript = plain(run.logfile_read.getvalue())
    assert "Error" not in transcript, transcript
    end(run)


def test_line_editing(dpdb):
    run = stopped(dpdb)
    run.send("p 3" + LEFT + "1" + "\x01" + "\x05" + " + 100\r")  # Ctrl-A, Ctrl-E
    run.expect(r"\r\n113\r\n")
    run.expect(PROMPT)
    end(run)


def test_keys_typed_before_the_prompt_shows_are_taken_as_typed(dpdb):
    # Between two lines the terminal is in its cooked mode, which takes a Ctrl-D as an end of file
    # and gave it back as a NUL once the editor made it raw: interact never ended. Here each key is
    # typed while the line before it still runs, before its prompt shows.
    run = stopped(dpdb)
    run.sendline("interact")
    run.expect(">>> ")
    run.send("x = 1; import time; time.sleep(0.5)\r")
    run.expect("sleep\\(0.5\\)\r\n")  # the line has gone to the program, which runs it
    run.sendcontrol("d")
    run.expect(PROMPT)
    # interact's names stay in its own namespace, as in pdb; a command typed ahead is taken too.
    run.send("p ('x' in locals(), __import__('time').sleep(0.5))[0]\r")
    run.expect(r"sleep\(0.5\)\)\[0\]\r\n")
    run.send("p 6 * 7\r")
    run.expect(r"\r\nFalse\r\n")
    run.expect(r"\r\n42\r\n")
    run.expect(PROMPT)
    end(run)


def test_history_is_kept_across_runs(dpdb):
    run = stopped(dpdb)
    run.sendline("p 6 * 7")
    run.expect(r"\r\n42\r\n")
    run.expect(PROMPT)
    end(run)
    history = os.path.join(dpdb.env["HOME"], ".local", "state", "dpdb", "history")
    assert "p 6 * 7" in history_lines(history)

    again = stopped(dpdb)
    again.send(UP + UP + "\r")  # `c`, then the line before it
    again.expect(r"\r\n42\r\n")
    again.expect(PROMPT)
    end(again)


@pytest.mark.parametrize("client", ["run", "attach"])
def test_ctrl_c_at_the_prompt_clears_the_line_and_kills_nothing(dpdb, client):
    run = stopped(dpdb)
    user = typing_at(dpdb, run, client)
    user.send("p 1 +")
    user.sendcontrol("c")
    user.sendcontrol("c")  # twice, on an empty line too
    user.send("p 40 + 2\r")
    user.expect(r"\r\n42\r\n")
    user.expect(PROMPT)
    assert "SyntaxError" not in plain(user.logfile_read.getvalue())
    assert user.isalive() and run.isalive()
    continue_to_end(run, user)


@pytest.mark.parametrize("client", ["run", "attach"])
def test_ctrl_c_interrupts_a_command_that_runs_too_long(dpdb, client):
    """As in pdb: the command stops with KeyboardInterrupt, the prompt comes back, the program
    keeps its state and goes on."""
    run = stopped(dpdb)
    user = typing_at(dpdb, run, client)
    user.sendline("!spins = 0")
    user.expect(PROMPT)
    user.sendline("!while True: spins += 1")
    time.sleep(0.5)
    user.sendintr()
    user.expect("KeyboardInterrupt")
    user.expect(PROMPT)
    user.sendline("p spins > 0, some_variable")
    user.expect(r"\(True, ")
    user.expect(PROMPT)
    continue_to_end(run, user)


@pytest.mark.parametrize("columns", [200, 60])
def test_terminal_width_reaches_pp(dpdb, columns):
    """pprint's own width is 80: a 180-character list fits on one line of a 200-column terminal,
    a 72-character one does not fit in 60 columns."""
    run = stopped(dpdb, dimensions=(50, columns))
    run.sendline("pp wide if %d > 80 else medium" % columns)
    run.expect(r"\[1000,")
    run.expect(PROMPT)
    printed = [line for line in plain("[1000," + run.before).split("\n") if line.strip()][:-1]
    if columns == 200:
        assert printed == [repr(list(range(1000, 1030)))], printed
    else:
        assert len(printed) == 12, printed
    end(run)


def test_resized_terminal_reaches_pp(dpdb):
    """The width pp uses follows the terminal when it changes size during the session."""
    run = stopped(dpdb, dimensions=(50, 200))
    run.sendline("pp medium")
    run.expect(r"\r\n\[1000, 1001, [^\r\n]*1011\]\r\n")  # one line: 72 columns fit in 200
    run.expect(PROMPT)
    run.setwinsize(50, 60)
    run.sendline("p 1")  # a line typed after the resize
    run.expect(r"\r\n1\r\n")
    run.expect(PROMPT)
    run.sendline("pp medium")
    run.expect(r"\[1000,")
    run.expect(PROMPT)
    printed = [line for line in plain("[1000," + run.before).split("\n") if line.strip()][:-1]
    assert len(printed) == 12, printed
    transcript = plain(run.logfile_read.getvalue())
    assert transcript.count("attached to session") == 1, transcript  # nothing else to see
    assert transcript.count("-> return some_variable") + transcript.count("-> breakpoint()") == 1
    end(run)


def test_output_the_terminal_does_not_read_holds_the_session_back(dpdb):
    """80 MB printed at the prompt while nobody reads the terminal: the hub holds the program's
    output back instead of queueing it past its bound and dropping the console (as it did)."""
    run = stopped(dpdb)
    transcript, run.logfile_read = run.logfile_read, None  # 80 MB is no transcript
    lines = 80_000
    run.sendline('!print(("x" * 999 + "\\n") * %d, end="")' % lines)
    run.expect_exact('end="")')  # the line's echo, before the output
    time.sleep(5)  # the terminal is not read: the client's writes block, then the hub's queue
    received, tail = 0, ""
    deadline = time.monotonic() + 180
    while "(Pdb) " not in tail and time.monotonic() < deadline:
        chunk = run.read_nonblocking(1 << 16, timeout=60)
        received += chunk.count("x")
        tail = (tail + chunk)[-64:]
    run.logfile_read = transcript
    assert received == 999 * lines, tail
    run.sendline("p some_variable")
    run.expect("42")
    end(run)
