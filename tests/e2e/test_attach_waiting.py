"""dpdb attach -p of programs whose main thread waits in C code (a sleep, a read, select,
waitpid, a lock, an event, a thread pool), started without dpdb: the agent loads while the main
thread waits, a pause says at once what the thread waits in and lands when the wait ends, and
however the attach ends, nothing stays armed: the program's signals and exit status are its own.
Processes that no debugger can work in as they are get their true reason."""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import PROMPT, TIMEOUT, finish, program, wait_until

WAITING = program(os.path.join("attach", "waiting.py"))
# The interpreter itself, outside the test's virtual environment: no dpdb in its sys.path.
PLAIN_PYTHON = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
MODES = ["sleep", "sleep_threading", "recv", "select", "waitpid", "lock", "event", "pool"]
# The system call the main thread waits in, where every interpreter and libc agree.
CALLS = {"recv": "a socket's recv (recvfrom)", "waitpid": "waitpid (wait4)",
         "lock": "a lock, a condition or an event (futex)",
         "event": "a lock, a condition or an event (futex)",
         "pool": "a lock, a condition or an event (futex)"}


class Waiting:
    """waiting.py MODE started plainly, its output read line by line (bounded)."""

    def __init__(self, dpdb, mode, python=PLAIN_PYTHON, env=None, wrapper=()):
        env = dict({k: v for k, v in dpdb.env.items()
                    if not k.startswith("DPDB_") and k not in ("PYTHONPATH", "PYTHONBREAKPOINT")},
                   **(env or {}))
        self.process = subprocess.Popen([*wrapper, python, "-u", WAITING, mode], env=env,
                                        stdout=subprocess.PIPE, start_new_session=True)
        self.pid = self.process.pid
        self.pending = b""
        self.expect("ready")
        if wrapper:  # the program is the wrapper's only child
            with open("/proc/%d/task/%d/children" % (self.pid, self.pid)) as children:
                (self.pid,) = map(int, children.read().split())

    def expect(self, line, timeout=TIMEOUT):
        """Waits for the next line of output, which must be `line`."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            assert left > 0 and select.select([self.process.stdout], [], [], left)[0], (
                "pid %d did not say %r within %ds" % (self.pid, line, timeout))
            chunk = os.read(self.process.stdout.fileno(), 4096)
            assert chunk, "pid %d ended without saying %r" % (self.pid, line)
            self.pending += chunk
        said, self.pending = self.pending.split(b"\n", 1)
        assert said.decode().split()[0] == line, said

    def wake(self):
        """Ends the current wait; the program says so on its next line, unless it stops there."""
        os.kill(self.pid, signal.SIGUSR1)

    def terminate(self):
        """SIGTERM: the program's own handler ends it with its own status. Sent once the main
        thread waits again: a handler's sys.exit that lands inside threading's Condition.wait, on
        its way into the wait, can make it release its lock twice (CPython's hazard, status 1)."""
        wait_until(self.main_thread_blocked, "pid %d's main thread in its wait" % self.pid)
        os.kill(self.pid, signal.SIGTERM)
        self.expect("terminated")
        assert self.process.wait(timeout=TIMEOUT) == 7

    def main_thread_blocked(self, polls=3):
        """Whether the main thread has slept in one system call for `polls` looks 20 ms apart."""
        seen = set()
        for _ in range(polls):
            try:
                with open("/proc/%d/task/%d/syscall" % (self.pid, self.pid)) as call:
                    seen.add(call.read().split()[0])
            except OSError:
                return True  # it has ended: nothing more to wait for
            time.sleep(0.02)
        return len(seen) == 1 and "running" not in seen

    def kill(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # its group: a wrapper too
            self.process.wait()


@pytest.fixture
def waiting(dpdb):
    started = []

    def start(*args, **kwargs):
        started.append(Waiting(dpdb, *args, **kwargs))
        return started[-1]

    yield start
    for process in started:
        process.kill()
    dpdb.run("dpdb", "hub", "--stop")


def attach_no_pause(dpdb, pid):
    done = dpdb.run("dpdb", "attach", "-p", str(pid), "--no-pause", "--timeout", str(TIMEOUT))
    assert done.returncode == 0, done.stderr
    assert "1 process is now debuggable" in done.stdout, done.stdout
    return done


def detach(dpdb, pid):
    released = dpdb.run("dpdb", "detach", "-p", str(pid))
    assert released.returncode == 0, released.stderr


def continue_detach_and_wake(dpdb, session, program_):
    """`c` at the program's own stop, then detached: its next wait ends with no stop."""
    session.sendline("c")
    finish(session)
    program_.expect("woken")
    detach(dpdb, program_.pid)
    program_.wake()
    program_.expect("woken")
    program_.terminate()


def pause_notice(mode, pid):
    call = CALLS.get(mode, "")
    return re.escape("pid %d's main thread waits in C code, in %s" % (pid, call))


@pytest.mark.parametrize("mode", MODES)
def test_a_waiting_main_thread_is_attached_paused_and_let_go(dpdb, waiting, mode):
    program_ = waiting(mode)
    attach_no_pause(dpdb, program_.pid)

    # The threading module knows the program's main thread as such, waiting where it waits.
    listing = json.loads(dpdb.run("dpdb", "stacks", "--json", str(program_.pid)).stdout)
    threads = [p for p in listing if p["pid"] == program_.pid][0]["stacks"]["threads"]
    main = [t for t in threads if t["name"] == "MainThread"]
    assert len(main) == 1 and main[0]["native_id"] == program_.pid, threads
    assert any("# waits here" in f["code"] for f in main[0]["frames"]), main

    # A pause says at once what the main thread waits in, its session shows the line that
    # called the wait (test_attach_waiting_view), and it stops on its next line once the wait
    # ends.
    session = dpdb.spawn("dpdb", "attach", "-p", str(program_.pid))
    session.expect(pause_notice(mode, program_.pid))
    session.expect("it stops at its next Python line once that ends")
    session.expect(r"attached to session \d+: pid %d" % program_.pid)
    session.expect(PROMPT)
    session.sendline("where")  # the line that called the wait, in threading's frames or not
    session.expect(r"\r\n-> return lambda: [^\r\n]*# waits here\r\n")
    session.expect(PROMPT)
    program_.wake()
    session.expect("The wait ended: paused by dpdb")
    session.expect(PROMPT)
    session.sendline("p __import__('os').getpid()")  # in the program's frame, or threading's
    session.expect(r"\r\n%d\r\n" % program_.pid)
    session.expect(PROMPT)
    # In the main thread itself, which is alive (interpreter shutdown waits for threads then).
    session.sendline("p (lambda t: (t.current_thread() is t.main_thread(), "
                     "t.main_thread().is_alive()))(__import__('threading'))")
    session.expect(r"\(True, True\)")
    session.expect(PROMPT)
    continue_detach_and_wake(dpdb, session, program_)


def test_a_pause_of_an_idle_asyncio_loop_lands_in_the_coroutine(dpdb, waiting):
    program_ = waiting("asyncio")
    session = dpdb.spawn("dpdb", "attach", "-p", str(program_.pid))
    session.expect(re.escape("pid %d's main thread waits in C code, in an event loop's epoll "
                             "(epoll_wait)" % program_.pid))
    program_.wake()
    # The line after the await in the program's coroutine, not the loop's next (selectors.py).
    session.expect(r"waiting\.py\(\d+\)serve\(\)\r\n-> woken\.clear\(\)")
    session.expect(PROMPT)
    session.sendline("c")
    finish(session)
    program_.expect("woken")
    detach(dpdb, program_.pid)
    program_.terminate()


def test_a_pause_of_an_idle_gevent_hub_lands_in_the_greenlet(dpdb, waiting):
    pytest.importorskip("gevent")  # installed by the frameworks suite
    program_ = waiting("gevent", python=sys.executable)
    session = dpdb.spawn("dpdb", "attach", "-p", str(program_.pid))
    session.expect(re.escape("pid %d's main thread waits in C code, in an event loop's epoll "
                             "(epoll_wait)" % program_.pid))
    # While the hub idles: the view is the greenlet's, at the line that waits, not the hub's
    # loop (gevent/hub.py).
    session.expect(r"waiting\.py\(\d+\)serve\(\)\r\n-> woken\.wait\(timeout=3600\)  # waits here")
    session.expect(PROMPT)
    session.sendline("p woken.is_set()")
    session.expect(r"\r\nFalse\r\n")
    session.expect(PROMPT)
    # Woken, the greenlet stops at its next line, in the same session.
    program_.wake()
    session.expect("The wait ended: paused by dpdb")
    session.expect(r"waiting\.py\(\d+\)serve\(\)\r\n-> woken\.clear\(\)")
    session.expect(PROMPT)
    session.sendline("c")
    finish(session)
    program_.expect("woken")
    detach(dpdb, program_.pid)
    program_.wake()
    program_.expect("woken")


def test_a_sigterm_whose_handler_waits_for_a_blocked_main_thread_still_ends_it(dpdb, waiting):
    # Another thread of the program took SIGTERM: CPython's C handler noted it there, and the main
    # thread, in a lock's wait that nothing interrupts, would wait for ever to run the Python
    # handler. It is the state a SIGTERM that lands just before the main thread blocks leaves,
    # which dpdb's threads made likely (issue 26: a detached process hung on SIGTERM). The agent
    # interrupts the wait, detached too, and the program's handler ends it.
    program_ = waiting("lock_term_elsewhere")
    attach_no_pause(dpdb, program_.pid)
    detach(dpdb, program_.pid)
    program_.terminate()


def test_a_master_in_waitpid_is_attached_with_its_child_as_a_tree(dpdb, waiting):
    # A pre-fork server's master: its main thread waits for its child, which sleeps.
    master = waiting("waitpid")
    done = dpdb.run("dpdb", "attach", "-p", str(master.pid), "--tree", "--no-pause",
                    "--timeout", str(TIMEOUT))
    assert done.returncode == 0, done.stderr
    assert "2 processes are now debuggable" in done.stdout, done.stdout
    child = int(open("/proc/%d/task/%d/children" % (master.pid, master.pid)).read().split()[0])
    assert {p["pid"] for p in dpdb.ls()["processes"]} >= {master.pid, child}
    detach(dpdb, master.pid)
    detach(dpdb, child)
    master.terminate()


def test_a_process_in_another_pid_namespace_is_registered_under_the_pid_seen_here(dpdb, waiting):
    if subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True).returncode:
        pytest.skip("a pid namespace of its own needs root")
    program_ = waiting("sleep", wrapper=["unshare", "--pid", "--fork"])
    with open("/proc/%d/status" % program_.pid) as status:
        (pids,) = [line.split()[1:] for line in status if line.startswith("NSpid:")]
    assert pids == [str(program_.pid), "1"]  # 1 inside its namespace
    attach_no_pause(dpdb, program_.pid)
    (listed,) = [p for p in dpdb.ls()["processes"] if p["pid"] == program_.pid]
    assert listed["inner_pid"] == 1, listed
    detach(dpdb, program_.pid)  # reaches it by the pid seen here
    program_.wake()
    program_.expect("woken")
    program_.terminate()


def process_state(pid):
    with open("/proc/%d/status" % pid) as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    return {"threads": int(fields["Threads"]), "rss_kb": int(fields["VmRSS"].split()[0]),
            "fds": len(os.listdir("/proc/%d/fd" % pid))}


# Each wait: with and without threading, a socket, select, waitpid, a lock, an event, a pool of
# threads that all wait.
@pytest.mark.parametrize("mode", MODES)
def test_ten_attach_and_detach_rounds_leave_the_program_as_it_was(dpdb, waiting, mode):
    program_ = waiting(mode)
    rounds = []
    for number in range(10):
        # Each round pauses (a view of the waiting thread first), stops at the next line, quits
        # the session and detaches.
        session = dpdb.spawn("dpdb", "attach", "-p", str(program_.pid))
        session.expect(pause_notice(mode, program_.pid))
        session.expect(PROMPT)
        program_.wake()
        session.expect("The wait ended: paused by dpdb")
        session.expect(PROMPT)
        session.sendline("q")
        finish(session)
        program_.expect("woken")
        detach(dpdb, program_.pid)
        rounds.append(process_state(program_.pid))
    first = rounds[0]
    assert all(r["threads"] == first["threads"] and r["fds"] == first["fds"] for r in rounds), (
        rounds)
    # Memory: what nine more rounds added, against what a round costs if it leaks its agent.
    assert rounds[-1]["rss_kb"] - first["rss_kb"] < 4096, rounds
    program_.wake()
    program_.expect("woken")
    program_.terminate()


def refusal(dpdb, pid):
    done = dpdb.run("dpdb", "attach", "-p", str(pid))
    assert done.returncode == 1, done.stdout
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_a_zombie_is_refused_for_what_it_is(dpdb):
    ended = subprocess.Popen([PLAIN_PYTHON, "-c", "pass"])
    try:
        wait_until(lambda: open("/proc/%d/stat" % ended.pid).read().rsplit(")", 1)[1].split()[0]
                   == "Z", "the process to exit")
        assert ("pid %d has exited: a zombie whose parent has not reaped it yet"
                % ended.pid) in refusal(dpdb, ended.pid)
    finally:
        ended.wait()


def test_a_stopped_process_is_refused_then_attached_once_it_goes_on(dpdb, waiting):
    program_ = waiting("sleep_threading")
    os.kill(program_.pid, signal.SIGSTOP)
    wait_until(lambda: "T" in open("/proc/%d/status" % program_.pid).read().split("State:")[1]
               .split()[0], "the process to stop")
    assert ("pid %d is stopped (SIGSTOP, or Ctrl-Z in its shell): let it go on first (kill -CONT "
            "%d)" % (program_.pid, program_.pid)) in refusal(dpdb, program_.pid)
    os.kill(program_.pid, signal.SIGCONT)
    attach_no_pause(dpdb, program_.pid)
    detach(dpdb, program_.pid)
    program_.terminate()


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_process_traced_already_is_refused_with_its_tracer(dpdb, waiting):
    program_ = waiting("sleep")
    tracer = subprocess.Popen(["strace", "-p", str(program_.pid), "-o", os.devnull],
                              stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: open("/proc/%d/status" % program_.pid).read().split("TracerPid:")[1]
                   .split()[0] == str(tracer.pid), "strace to trace the process")
        assert ("pid %d is traced already, by pid %d (strace), and a process has one tracer at "
                "a time" % (program_.pid, tracer.pid)) in refusal(dpdb, program_.pid)
    finally:
        tracer.terminate()
        tracer.wait()
    attach_no_pause(dpdb, program_.pid)
    detach(dpdb, program_.pid)
    program_.terminate()


def static_interpreter():
    """The system's interpreter if it is built without libpython (as Debian's is), else None."""
    for name in ("/usr/bin/python3",):
        path = os.path.realpath(name)
        if os.path.exists(path):
            linked = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
            if "libpython" not in linked:
                return path
    return None


@pytest.mark.skipif(static_interpreter() is None, reason="needs a static system interpreter")
def test_a_static_interpreter_deleted_since_it_started_is_recognised(dpdb, waiting):
    # As every running service is after the system's interpreter was upgraded.
    folder = os.path.join(dpdb.root, "bin")
    os.makedirs(folder)
    original = static_interpreter()
    copy = os.path.join(folder, os.path.basename(original))
    shutil.copy(original, copy)
    program_ = waiting("sleep_threading", python=copy,
                       env={"PYTHONHOME": os.path.dirname(os.path.dirname(original))})
    os.unlink(copy)
    assert os.readlink("/proc/%d/exe" % program_.pid).endswith(" (deleted)")
    done = dpdb.run("dpdb", "attach", "-p", str(program_.pid), "--no-pause")
    version = subprocess.run([original, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
    if version == "%d.%d" % sys.version_info[:2]:
        assert done.returncode == 0, done.stderr
        detach(dpdb, program_.pid)
    else:
        # This dpdb has no agent for it: said so, and not that it is no CPython.
        assert done.returncode == 1
        assert "runs Python %s, and this dpdb" % version in done.stderr, done.stderr
        assert "has no agent for it" in done.stderr and "pip install" not in done.stderr
    program_.terminate()
