"""Signal handlers the program installed in C are exactly as they were after a pause and a
session: dpdb sets aside the program's Python handlers while the main thread is paused, and puts
back the kernel's action, not only Python's record (signal.signal() would replace the C one)."""

import os
import signal

import pexpect

from conftest import PROMPT, program


def test_c_level_sigterm_handler_is_intact_after_a_session(dpdb):
    written = os.path.join(dpdb.root, "handled")
    child = dpdb.spawn("dpdb", "run", program("c_sigterm.py"), written)
    child.expect("handlers set")
    child.expect(r"attached to session \d+")
    child.expect(PROMPT)
    child.sendline("p 6 * 7")
    child.expect("42")
    child.expect(PROMPT)
    child.sendline("c")
    child.expect(r"waiting for SIGTERM in (\d+)")
    os.kill(int(child.match.group(1)), signal.SIGTERM)
    child.expect(pexpect.EOF)
    child.close()
    assert "the Python handler ran" not in child.logfile_read.getvalue()
    assert child.exitstatus == 7, (child.exitstatus, child.signalstatus)
    with open(written) as handled:
        assert handled.read() == "C handler ran\n"


def test_sigterm_ends_a_process_whose_main_thread_is_in_a_long_c_call(dpdb):
    """As without dpdb: at once, by the signal. dpdb sends the logpoint queue first on SIGTERM;
    done by a Python handler, that waited for the main thread to run bytecode again (minutes)."""
    child = dpdb.spawn("dpdb", "run", program("busy_in_c.py"))
    child.expect(r"busy in C in (\d+)")
    os.kill(int(child.match.group(1)), signal.SIGTERM)
    child.expect(pexpect.EOF)
    child.close()
    assert "the C call returned" not in child.logfile_read.getvalue()
    assert child.exitstatus == 128 + signal.SIGTERM, (child.exitstatus, child.signalstatus)
