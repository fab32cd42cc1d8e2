"""`dpdb stacks -p PID` of a process that carries no agent: its threads' stacks read from its
memory, nothing loaded into it, on every interpreter; the same frames and lines as the agent
reports once `dpdb attach -p` has loaded one; a process the OS will not let dpdb read, or that is
not CPython, refused in one line."""

import json
import os
import pwd
import re
import signal
import subprocess
import sys

import pytest

from conftest import TIMEOUT, line_of, program, wait_until

OUTSIDE = program(os.path.join("stacks", "outside.py"))
SPINNING = program(os.path.join("stacks", "spinning.py"))
UNNAMED = program(os.path.join("stacks", "unnamed.py"))
WAITING = program(os.path.join("attach", "waiting.py"))
# The interpreter itself, outside the test's virtual environment: no dpdb in its sys.path.
PLAIN_PYTHON = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
# Where the kernel shows a thread in time.sleep: clock_nanosleep from 3.11 on, select before.
SLEEPS = ("hrtimer_nanosleep", "poll_schedule_timeout", "do_select")
MEMORY = {"DPDB_STACKS": "memory"}


class Outside:
    """outside.py started plainly; ready once its main thread sleeps and its waiter waits."""

    def __init__(self, dpdb, script=OUTSIDE):
        env = {k: v for k, v in dpdb.env.items()
               if not k.startswith("DPDB_") and k not in ("PYTHONPATH", "PYTHONBREAKPOINT")}
        self.process = subprocess.Popen([PLAIN_PYTHON, "-u", script], env=env,
                                        stdout=subprocess.PIPE, text=True,
                                        start_new_session=True)
        self.pid = self.process.pid
        self.said = self.process.stdout.readline().split()
        assert self.said[:1] == ["ready"], self.said
        task = "/proc/%d/task/%%d/wchan" % self.pid
        wait_until(lambda: self._wchan(task % self.pid).startswith(SLEEPS),
                   "the main thread to sleep")
        if script == OUTSIDE:
            self.waiter_ident, self.waiter_native = int(self.said[1]), int(self.said[2])
            wait_until(lambda: self._wchan(task % self.waiter_native).startswith("futex"),
                       "the waiter to wait")

    @staticmethod
    def _wchan(path):
        with open(path) as f:
            return f.read()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()


@pytest.fixture
def outside(dpdb):
    started = []

    def start(script=OUTSIDE):
        started.append(Outside(dpdb, script))
        return started[-1]

    yield start
    for process in started:
        process.kill()
    dpdb.run("dpdb", "hub", "--stop")


def stacks_json(dpdb, *args, env=None):
    done = dpdb.run("dpdb", "stacks", "--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    (process,) = json.loads(done.stdout)
    return process


def frames(thread):
    return [(f["file"], f["line"], f["function"]) for f in thread["frames"]]


def test_stacks_read_from_memory_name_the_waiting_functions_and_lines(dpdb, outside):
    target = outside()
    done = dpdb.run("dpdb", "stacks", "-p", str(target.pid), env=MEMORY)
    assert done.returncode == 0, done.stderr
    version = "%d.%d" % sys.version_info[:2]
    assert "pid %d python" % target.pid in done.stdout
    assert "read from its memory (CPython %s)" % version in done.stdout
    read = stacks_json(dpdb, "-p", str(target.pid), env=MEMORY)
    assert read["read_from_memory"] == version
    main, waiter = read["stacks"]["threads"]
    assert main["name"] == "MainThread" and main["ident"] != target.waiter_ident
    assert frames(main)[-3:] == [
        (OUTSIDE, line_of(OUTSIDE, "# the module calls main here"), "<module>"),
        (OUTSIDE, line_of(OUTSIDE, "# main calls nap here"), "main"),
        (OUTSIDE, line_of(OUTSIDE, "# the main thread sleeps here"), "nap")]
    assert main["frames"][-1]["code"] == "time.sleep(60)  # the main thread sleeps here"
    assert waiter["ident"] == target.waiter_ident
    # Read from its Thread object, found as `self` of threading's Thread._bootstrap frame.
    assert waiter["name"] == "waiter"
    assert "Thread waiter (%d" % target.waiter_ident in done.stdout
    # Interpreters keep the native id from 3.11 on.
    assert waiter["native_id"] == (target.waiter_native if sys.version_info >= (3, 11) else None)
    waiter_frames = frames(waiter)
    assert (OUTSIDE, line_of(OUTSIDE, "# the waiter waits here"), "wait_for_it") in waiter_frames
    # Innermost last: Event.wait, then the Condition's wait, in the threading module.
    assert [f[2] for f in waiter_frames[-2:]] == ["wait", "wait"]
    assert all(f[0].endswith("threading.py") for f in waiter_frames[-2:])
    # Nothing was loaded into it.
    with open("/proc/%d/maps" % target.pid) as maps:
        assert "dpdb" not in maps.read()


def test_stacks_read_from_memory_match_the_agents(dpdb, outside):
    target = outside()
    from_memory = stacks_json(dpdb, "-p", str(target.pid), env=MEMORY)
    attached = dpdb.run("dpdb", "attach", "-p", str(target.pid), "--no-pause", "--timeout",
                        str(TIMEOUT))
    assert attached.returncode == 0, attached.stderr
    from_agent = stacks_json(dpdb, str(target.pid))
    assert "read_from_memory" not in from_agent
    after = stacks_json(dpdb, "-p", str(target.pid), env=MEMORY)
    by_ident = {t["ident"]: t for t in after["stacks"]["threads"]}
    agent_threads = from_agent["stacks"]["threads"]
    assert {t["name"] for t in agent_threads} == {"MainThread", "waiter"}
    for thread in agent_threads:
        assert frames(by_ident[thread["ident"]]) == frames(thread), thread["name"]
        assert by_ident[thread["ident"]]["name"] == thread["name"]
    # The waiting threads stood where they stood before the agent came.
    assert [frames(t) for t in from_memory["stacks"]["threads"]] == [
        frames(by_ident[t["ident"]]) for t in from_memory["stacks"]["threads"]]
    # Without DPDB_STACKS, a process with an agent is asked through it (thread names known).
    done = dpdb.run("dpdb", "stacks", "-p", str(target.pid))
    assert done.returncode == 0, done.stderr
    assert "read from its memory" not in done.stdout and "Thread waiter (" in done.stdout


def test_the_thread_that_holds_the_gil_is_marked(dpdb, outside):
    target = outside(SPINNING)
    # The main thread sleeps with the GIL released: the spinner takes it, and keeps it for good
    # (nothing asks for it). On a loaded machine the spinner may not have run yet since the main
    # thread let the GIL go (nobody holds it then, and nobody is marked): read until it has.
    wait_until(lambda: stacks_json(dpdb, "-p", str(target.pid), env=MEMORY)["stacks"]["threads"][1]
               ["gil"] == "holds the GIL", "the spinner to take the GIL")
    done = dpdb.run("dpdb", "stacks", "-p", str(target.pid), env=MEMORY)
    assert done.returncode == 0, done.stderr
    main, spinner = stacks_json(dpdb, "-p", str(target.pid), env=MEMORY)["stacks"]["threads"]
    assert spinner["ident"] == int(target.said[1])
    assert (spinner["gil"], main["gil"]) == ("holds the GIL", None)
    # Caught anywhere in its loop: the `while` line or its body.
    spins = line_of(SPINNING, "# the spinner spins here")
    assert frames(spinner)[-1][2] == "spin" and frames(spinner)[-1][1] in (spins - 1, spins)
    assert re.search(r"Thread spinner \(%s.*\) \[holds the GIL\]" % spinner["ident"], done.stdout)


def test_a_process_that_is_not_python_is_refused_in_one_line(dpdb):
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        executable = os.readlink("/proc/%d/exe" % sleeper.pid)
        done = dpdb.run("dpdb", "stacks", "-p", str(sleeper.pid), env=MEMORY)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert done.returncode == 1
    assert done.stdout.strip() == "pid %d (%s) is not a CPython process" % (sleeper.pid,
                                                                          executable)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to run dpdb as another user")
def test_another_users_process_is_refused_in_one_line(dpdb, outside):
    target = outside()
    nobody = pwd.getpwnam("nobody")

    def as_nobody():
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    try:
        done = dpdb.run("dpdb", "stacks", "-p", str(target.pid), env=MEMORY,
                        preexec_fn=as_nobody)
    except PermissionError:
        pytest.skip("nobody may not run this checkout's dpdb (a folder above it is private)")
    assert done.returncode == 1, done.stderr
    assert done.stdout.strip() == (
        "pid %d belongs to root: only that user or root may debug it" % target.pid)


def test_a_thread_threading_did_not_start_reads_without_a_name(dpdb, outside):
    target = outside(UNNAMED)
    main, raw = stacks_json(dpdb, "-p", str(target.pid), env=MEMORY)["stacks"]["threads"]
    assert raw["ident"] == int(target.said[1])
    assert (main["name"], raw["name"]) == ("MainThread", "?")
    assert [f[2] for f in frames(raw)] == ["raw"]


def test_a_tree_is_read_from_memory_parents_first(dpdb):
    # A pre-fork server's master waiting for its child, which sleeps.
    master = subprocess.Popen([PLAIN_PYTHON, "-u", WAITING, "waitpid"], stdout=subprocess.PIPE,
                              text=True, start_new_session=True,
                              env={k: v for k, v in dpdb.env.items()
                                   if not k.startswith("DPDB_")
                                   and k not in ("PYTHONPATH", "PYTHONBREAKPOINT")})
    try:
        assert master.stdout.readline().startswith("ready")
        with open("/proc/%d/task/%d/children" % (master.pid, master.pid)) as children:
            (child,) = map(int, children.read().split())
        wait_until(lambda: Outside._wchan("/proc/%d/wchan" % child).startswith(SLEEPS),
                   "the child to sleep")
        wait_until(lambda: Outside._wchan("/proc/%d/wchan" % master.pid) == "do_wait",
                   "the master to wait")
        done = dpdb.run("dpdb", "stacks", "--json", "-p", str(master.pid), "--tree", env=MEMORY)
        assert done.returncode == 0, done.stderr
        read = json.loads(done.stdout)
        assert [p["pid"] for p in read] == [master.pid, child]
        innermost = [p["stacks"]["threads"][0]["frames"][-1] for p in read]
        assert innermost[0]["code"] == "return lambda: os.waitpid(child, 0)  # waits here"
        assert (innermost[1]["function"], innermost[1]["code"]) == ("waitpid",
                                                                    "time.sleep(3600)")
        for pid in (master.pid, child):
            with open("/proc/%d/maps" % pid) as maps:
                assert "dpdb" not in maps.read()
    finally:
        os.killpg(master.pid, signal.SIGKILL)
        master.wait()
        master.stdout.close()
    # Without -p there is no tree to take.
    done = dpdb.run("dpdb", "stacks", "--tree")
    assert (done.returncode, done.stderr) == (
        2, "dpdb: --tree goes with -p PID (the processes below PID)\n")
