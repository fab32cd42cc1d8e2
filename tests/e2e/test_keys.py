"""The terminal's keys under `dpdb run`: Ctrl-C pauses the program; once the user said `q` for
it, or pressed Ctrl-C twice while the first one's pause has not landed, Ctrl-C is the program's,
as it would be without dpdb (a loop ends with KeyboardInterrupt, a server stops)."""

import re
import socket
import time

import pexpect

from conftest import PROMPT, finish, program, wait_until

# A shell's status for a program that died of SIGINT (Python re-raises it after the traceback).
DIED_OF_SIGINT = 130
# How soon a second Ctrl-C goes to the program (dpdb._ctrl_c.SECOND_PRESS_SECONDS, the README's).
SECOND_PRESS_SECONDS = 2.0
# Where the kernel shows a thread in time.sleep: clock_nanosleep from 3.11 on, select before.
SLEEPS = ("hrtimer_nanosleep", "poll_schedule_timeout", "do_select")
PRESSED = (r"dpdb: pausing at the program's next line \(Ctrl-C again within 2 s goes to the "
           r"program\)")
QUIT = (r"no longer debugging process \d+; it runs on \(Ctrl-C in its terminal now goes to "
        r"it\)")


def sleeping(child):
    """Once the program's main thread sleeps in C, in its loop: a Ctrl-C's pause cannot land
    before the sleep ends ("loop started" is printed two lines before the loop)."""
    child.expect(r"loop started \(pid (\d+)\)")
    wchan = "/proc/%s/wchan" % child.match.group(1)
    wait_until(lambda: open(wchan).read().startswith(SLEEPS), "the program to sleep")


def ctrl_c_pauses(child):
    child.sendintr()
    child.expect(PRESSED)
    child.expect(r"Program interrupted by Ctrl-C\. \(Use 'c' to resume; after 'q', Ctrl-C goes "
                 r"to the program\.\)")
    child.expect(PROMPT)


def quit_the_process(child):
    child.sendline("q")
    child.expect(QUIT)
    child.expect(r"quit: the process runs on without the debugger")


def test_ctrl_c_after_q_ends_a_loop(dpdb):
    child = dpdb.spawn("dpdb", "run", program("ctrl_c_loop.py"), "0.02")
    sleeping(child)  # in the loop: `rounds` is set
    ctrl_c_pauses(child)
    child.sendline("p rounds > 0")
    child.expect("True")
    child.expect(PROMPT)
    # Continued: Ctrl-C pauses again (the first one's pause landed: this is no second press).
    child.sendline("c")
    dpdb.wait_ls(lambda listing: not listing["sessions"])
    ctrl_c_pauses(child)
    quit_the_process(child)
    child.sendintr()
    child.expect("loop ended by KeyboardInterrupt")
    child.expect("KeyboardInterrupt")
    finish(child, DIED_OF_SIGINT)


def test_ctrl_c_while_q_leaves_the_session_ends_a_loop(dpdb):
    # Once pdb's command loop took it for the session's: --KeyboardInterrupt-- and a prompt in a
    # session `q` had closed.
    child = dpdb.spawn("dpdb", "run", program("ctrl_c_as_the_session_closes.py"), "quit", "0.02")
    sleeping(child)
    ctrl_c_pauses(child)
    child.sendline("q")
    # The program's output reaches the terminal straight, the session's through the hub: in
    # either order.
    child.expect(pexpect.EOF)
    for said in (QUIT, "quit: the process runs on without the debugger",
                 r"loop ended by KeyboardInterrupt\r\n(.|\n)*KeyboardInterrupt"):
        assert re.search(said, child.before), said
    finish(child, DIED_OF_SIGINT)


def test_ctrl_c_while_c_leaves_the_session_pauses_again(dpdb):
    # Once its pause was armed in dpdb's own code, for a new debugger while the program's frame
    # went on with the old one: "pausing at the program's next line", and no pause came.
    child = dpdb.spawn("dpdb", "run", program("ctrl_c_as_the_session_closes.py"), "continued",
                       "0.02")
    sleeping(child)
    ctrl_c_pauses(child)
    child.sendline("p rounds")
    child.expect(r"\r\n(\d+)\r\n")
    paused_at = int(child.match.group(1))
    child.expect(PROMPT)
    child.sendline("c")
    child.expect(PRESSED)
    child.expect(r"Program interrupted by Ctrl-C\.")
    child.expect(PROMPT)
    child.sendline("p rounds")  # paused again in the loop, a round or so later
    child.expect(r"\r\n(\d+)\r\n")
    assert int(child.match.group(1)) in (paused_at, paused_at + 1)
    child.expect(PROMPT)
    quit_the_process(child)
    child.sendintr()
    child.expect("loop ended by KeyboardInterrupt")
    finish(child, DIED_OF_SIGINT)


def test_ctrl_c_after_q_stops_a_server(dpdb):
    child = dpdb.spawn("dpdb", "run", program("ctrl_c_server.py"))
    child.expect(r"server listening on (\d+)")
    port = int(child.match.group(1))
    ctrl_c_pauses(child)
    quit_the_process(child)
    # It runs on: it still answers.
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(b"hello\n")
        assert client.makefile().readline().strip() == "echo hello"
    child.sendintr()
    child.expect("server stopped by KeyboardInterrupt")
    finish(child)


def test_second_ctrl_c_while_the_pause_waits_goes_to_the_program(dpdb):
    # The main thread sleeps in C for a minute: the first Ctrl-C's pause cannot land before.
    child = dpdb.spawn("dpdb", "run", program("ctrl_c_loop.py"), "60")
    sleeping(child)
    child.sendintr()
    child.expect(PRESSED)  # the first one was taken: the second is a second press
    child.sendintr()
    index = child.expect(["loop ended by KeyboardInterrupt", PROMPT])
    assert index == 0, "the second Ctrl-C paused instead of interrupting"
    finish(child, DIED_OF_SIGINT)
    assert "Program interrupted by Ctrl-C" not in child.logfile_read.getvalue()


def test_a_later_ctrl_c_while_the_pause_waits_keeps_it_and_a_quick_one_interrupts(dpdb):
    child = dpdb.spawn("dpdb", "run", program("ctrl_c_loop.py"), "60")
    sleeping(child)
    child.sendintr()
    child.expect(PRESSED)
    # Past the window for a second press: the pause stays armed, and the window opens again.
    deadline = time.monotonic() + SECOND_PRESS_SECONDS + 0.5
    while time.monotonic() < deadline:
        time.sleep(0.1)
    child.sendintr()
    child.expect(PRESSED)
    child.sendintr()
    index = child.expect(["loop ended by KeyboardInterrupt", PROMPT])
    assert index == 0, "the third Ctrl-C paused instead of interrupting"
    finish(child, DIED_OF_SIGINT)
