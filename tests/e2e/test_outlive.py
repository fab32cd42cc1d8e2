"""A job outlives its terminal: `dpdb run` keeps its hub and sessions when the terminal goes
(SIGHUP), passes SIGTERM and SIGINT sent to it on to the program as a supervisor would, and
leaves nothing in the runtime directory once the job ends."""

import os
import signal
import socket
import subprocess

from conftest import DPDB, PROMPT, as_a_foreground_job, finish, program, wait_until

PROGRAM = program("outlive.py")


def runtime_entries(dpdb):
    folder = os.path.join(dpdb.env["XDG_RUNTIME_DIR"], "dpdb-%d" % os.getuid())
    return sorted(name for name in os.listdir(folder) if name.startswith("run-"))


def test_a_run_whose_terminal_goes_away_keeps_its_sessions(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM, "stop")
    run.expect(r"attached to session (\d+)")
    session = run.match.group(1)
    run.expect(PROMPT)
    os.kill(run.pid, signal.SIGHUP)  # what a dropped SSH connection sends
    wait_until(lambda: not dpdb.ls()["sessions"][0]["attached"], "the session to be let go")
    assert run.isalive()
    other = dpdb.spawn("dpdb", "attach", session)  # from a new terminal
    other.expect(PROMPT)
    other.sendline("c")
    finish(other)
    run.expect("program done")
    finish(run)
    assert runtime_entries(dpdb) == []


def test_sigterm_to_dpdb_run_goes_to_the_program(dpdb):
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    run.expect("ready")
    os.kill(run.pid, signal.SIGTERM)  # as a process supervisor stops a service
    run.expect("program got SIGTERM")
    finish(run, 3)
    assert runtime_entries(dpdb) == []


def test_sigint_sent_to_dpdb_run_goes_to_the_program(dpdb):
    # Without a terminal (a service manager's job): the program gets KeyboardInterrupt and ends.
    # Started as a foreground job: one started in the background by a script has SIGINT ignored,
    # and so has its program, with or without dpdb.
    run = subprocess.Popen([DPDB, "run", PROGRAM], env=dpdb.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=as_a_foreground_job)
    try:
        assert run.stdout.readline().startswith("ready")
        os.kill(run.pid, signal.SIGINT)
        _, errors = run.communicate(timeout=30)
    finally:
        run.kill()
    # Python ends by the signal itself after the traceback: 128 + SIGINT.
    assert "KeyboardInterrupt" in errors and run.returncode == 130, errors
    assert runtime_entries(dpdb) == []


def test_sigint_sent_to_dpdb_run_in_a_terminal_pauses_the_program(dpdb):
    # In a terminal, a program under dpdb run takes SIGINT as Ctrl-C: it pauses.
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    run.expect("ready")
    os.kill(run.pid, signal.SIGINT)
    run.expect("Program interrupted by Ctrl-C")
    run.expect(PROMPT)
    run.sendline("c")
    os.kill(run.pid, signal.SIGTERM)
    run.expect("program got SIGTERM")
    finish(run, 3)


def test_leftovers_of_dead_runs_are_removed_by_the_next_command(dpdb):
    folder = os.path.join(dpdb.env["XDG_RUNTIME_DIR"], "dpdb-%d" % os.getuid())
    os.makedirs(folder, mode=0o700, exist_ok=True)
    dead = 4194303  # above any pid this machine hands out
    os.makedirs(os.path.join(folder, "run-%d.d" % dead))
    open(os.path.join(folder, "run-%d.d" % dead, "sitecustomize.py"), "w").close()
    open(os.path.join(folder, "run-%d.log" % dead), "w").close()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(os.path.join(folder, "run-%d.sock" % dead))
    stale.close()  # bound, never listening: a hub that died
    open(os.path.join(folder, "run-%d.sock.token" % dead), "w").close()
    dpdb.run("dpdb", "ls")
    assert runtime_entries(dpdb) == []
