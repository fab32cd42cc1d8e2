"""dpdb attach -p: programs started without dpdb (by the plain interpreter, without dpdb in their
environment) made debuggable while they run, and left computing what they would have."""

import os
import pwd
import signal
import socket
import subprocess
import sys
import sysconfig
import time

import pytest

from conftest import DPDB, PROMPT, finish, line_of, program, wait_until

TARGET = program(os.path.join("attach", "target.py"))
PREFORK = program(os.path.join("attach", "prefork.py"))
# The interpreter itself, outside the test's virtual environment: no dpdb in its sys.path.
PLAIN_PYTHON = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
ANSWER = "result True 42"  # work(14)


class Target:
    """A program started plainly, its output read line by line."""

    def __init__(self, dpdb, *args, script=TARGET, python=PLAIN_PYTHON, env=None, wrapper=()):
        self.stop_file = os.path.join(dpdb.root, "stop")
        env = dict({k: v for k, v in dpdb.env.items()
                    if not k.startswith("DPDB_") and k not in ("PYTHONPATH", "PYTHONBREAKPOINT")},
                   **(env or {}))
        argv = list(wrapper) + [python, "-u", script] + ([self.stop_file] if script == TARGET else []) + list(args)
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True,
                                        start_new_session=True)
        self.pid = self.process.pid
        self.lines = []

    def expect(self, prefix):
        while True:
            line = self.process.stdout.readline()
            assert line, "the program ended without %r; it said %s" % (prefix, self.lines)
            self.lines.append(line.strip())
            if line.startswith(prefix):
                return line.strip()

    def finish(self):
        open(self.stop_file, "w").close()
        self.expect("result")
        assert self.lines[-1] == ANSWER, self.lines
        assert self.process.wait(timeout=30) == 0

    def kill(self):
        if self.process.poll() is None:
            os.killpg(self.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def target(dpdb):
    started = []

    def start(*args, **kwargs):
        started.append(Target(dpdb, *args, **kwargs))
        return started[-1]

    yield start
    for process in started:
        process.kill()
    dpdb.run("dpdb", "hub", "--stop")


def attach(dpdb, pid, *extra):
    return dpdb.run("dpdb", "attach", "-p", str(pid), *extra)


def debuggable(done, count=1):
    assert done.returncode == 0, done.stderr
    assert "%d process%s now debuggable" % (count, " is" if count == 1 else "es are") in done.stdout
    return done


def stop_at_work(dpdb, prompt_for):
    """A global breakpoint in work(); the prompt of the first process to reach it."""
    session = dpdb.spawn("dpdb", "attach", "--next")
    session.expect("waiting for the next breakpoint anywhere")
    line = line_of(TARGET, "attach breakpoint here")
    assert dpdb.run("dpdb", "break", "target.py:%d" % line).returncode == 0
    session.expect(r"attached to session \d+: pid %d" % prompt_for)
    session.expect(PROMPT)
    return session


def release(dpdb, program_):
    """No more breakpoints, and the process runs on (threads that hit one again meanwhile
    resume)."""
    assert dpdb.run("dpdb", "break", "--clear").returncode == 0
    released = dpdb.run("dpdb", "detach", "-p", str(program_.pid))
    assert released.returncode == 0, released.stderr


@pytest.mark.parametrize("mode", ["busy", "sleep", "select", "socket", "threads"])
def test_attach_and_stop_at_a_global_breakpoint(dpdb, target, mode):
    program_ = target(mode)
    program_.expect("ready")
    debuggable(attach(dpdb, program_.pid, "--no-pause"))
    session = stop_at_work(dpdb, program_.pid)
    session.sendline("p n >= 0")
    session.expect(r"\r\nTrue\r\n")
    session.expect(PROMPT)
    session.sendline("c")
    finish(session)
    release(dpdb, program_)
    program_.finish()


def test_attach_pauses_and_prompts_then_detach_lets_it_run(dpdb, target):
    program_ = target("busy")
    program_.expect("ready")
    session = dpdb.spawn("dpdb", "attach", "-p", str(program_.pid))
    session.expect(r"attached to session \d+: pid %d" % program_.pid)
    session.expect(r"Paused by dpdb\. \(Use 'c' to resume.\)")
    session.expect(PROMPT)
    session.sendline("p os.getpid()")  # in busy() or work(), wherever the next line was
    session.expect(r"\r\n%d\r\n" % program_.pid)
    session.expect(PROMPT)
    session.sendline("c")
    finish(session)
    released = dpdb.run("dpdb", "detach", "-p", str(program_.pid))
    assert released.returncode == 0 and "runs on without the debugger" in released.stdout
    # Detached: a global breakpoint is armed nowhere in it any more.
    line = line_of(TARGET, "attach breakpoint here")
    assert "pending" in dpdb.run("dpdb", "break", "target.py:%d" % line).stdout
    # Attached again, it is debugged again: the breakpoint goes in, and stops it.
    session = dpdb.spawn("dpdb", "attach", "--next")
    session.expect("waiting for the next breakpoint anywhere")
    again = attach(dpdb, program_.pid, "--no-pause")
    assert again.returncode == 0, again.stderr
    assert ("pid %d carries the dpdb agent already; pid %d is debugged again"
            % (program_.pid, program_.pid)) in again.stdout
    session.expect(r"attached to session \d+: pid %d" % program_.pid)
    session.expect(PROMPT)
    session.sendline("c")
    finish(session)
    release(dpdb, program_)
    program_.finish()


def test_attach_waits_for_a_thread_holding_the_gil_in_c_code(dpdb, target):
    program_ = target("regex")
    program_.expect("regex start")
    done = debuggable(attach(dpdb, program_.pid, "--no-pause"))
    assert "waiting for pid %d to run Python code again" % program_.pid in done.stderr, done.stderr
    assert program_.expect("regex took")
    session = stop_at_work(dpdb, program_.pid)
    session.sendline("c")
    finish(session)
    release(dpdb, program_)
    program_.finish()


def test_an_attach_that_gives_up_leaves_nothing_running(dpdb, target):
    program_ = target("regex")
    program_.expect("regex start")
    done = attach(dpdb, program_.pid, "--no-pause", "--timeout", "1")
    assert done.returncode == 1
    assert "did not run Python code within 1s; nothing was started in it" in done.stderr
    assert request_folders(dpdb) == []
    program_.expect("regex took")
    time.sleep(0.5)
    assert all(p["pid"] != program_.pid for p in dpdb.ls()["processes"])
    program_.finish()


def test_a_start_up_that_fails_leaves_no_thread_of_dpdb_behind(dpdb, target):
    # The agent loads but cannot reach the hub: in the target's mount namespace the hub's
    # socket is /dev/null. Its link, control and dump threads were left running for good.
    if subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode != 0:
        pytest.skip("hiding the hub from the target needs a mount namespace (root)")
    hub = dpdb.spawn("dpdb", "hub")
    hub.expect("dpdb hub listening on unix:(\\S+)\r\n")
    hidden = hub.match.group(1)
    program_ = target("sleep", wrapper=["unshare", "--mount", "--propagation", "private", "sh",
                                        "-c", 'mount --bind /dev/null "$0" && exec "$@"', hidden])
    program_.expect("ready")
    done = attach(dpdb, program_.pid, "--no-pause")
    assert done.returncode == 1, done.stdout
    assert "the agent could not reach the hub at unix:%s within 5s" % hidden in done.stderr

    def own_threads():
        names = []
        for task in os.listdir("/proc/%d/task" % program_.pid):
            with open("/proc/%d/task/%s/comm" % (program_.pid, task)) as comm:
                names.append(comm.read().strip())
        return [name for name in names if name.startswith("dpdb-")]

    wait_until(lambda: own_threads() == [], "no thread of dpdb's in the target")
    program_.finish()


def request_folders(dpdb):
    """The attach's request folders left in the runtime directory (none once an attach ended)."""
    runtime = os.path.join(dpdb.env["XDG_RUNTIME_DIR"], "dpdb-%d" % os.getuid())
    return [name for name in os.listdir(runtime)
            if name.startswith("attach-") and name != "attach-site"]


def test_ctrl_c_while_the_attach_waits_for_the_gil_starts_nothing(dpdb, target):
    program_ = target("regex")
    program_.expect("regex start")
    session = dpdb.spawn("dpdb", "attach", "-p", str(program_.pid), "--no-pause")
    session.expect("waiting for pid %d to run Python code again" % program_.pid)
    session.sendintr()
    session.expect("attach interrupted; nothing was started in pid %d" % program_.pid)
    finish(session, 130)
    assert request_folders(dpdb) == []
    program_.expect("regex took")
    program_.finish()


def test_a_process_that_exits_during_the_attach(dpdb, target):
    program_ = target("regex")
    program_.expect("regex start")
    attaching = subprocess.Popen([DPDB, "attach", "-p", str(program_.pid), "--no-pause"],
                                 env=dpdb.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
    # The first line may say that the attach started your local hub.
    assert any("waiting for pid %d" % program_.pid in attaching.stderr.readline()
               for _ in range(2))
    os.kill(program_.pid, signal.SIGKILL)  # as a supervisor or the OOM killer would
    _, errors = attaching.communicate(timeout=30)
    assert attaching.returncode == 1
    assert "pid %d exited during the attach" % program_.pid in errors, errors
    assert program_.process.wait(timeout=30) == -signal.SIGKILL


def test_what_is_not_python_is_left_alone(dpdb):
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        done = attach(dpdb, sleeper.pid)
        assert done.returncode == 1
        assert "is not a CPython process" in done.stderr
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_stripped_interpreter_is_attached(dpdb, target):
    # Distributions strip their interpreters: the injector needs only the dynamic symbols
    # (.dynsym), which stripping keeps.
    folder = os.path.join(dpdb.root, "stripped")
    os.makedirs(os.path.join(folder, "lib"))
    python = os.path.join(folder, os.path.basename(PLAIN_PYTHON))
    subprocess.run(["strip", "--strip-all", "-o", python, os.path.realpath(PLAIN_PYTHON)],
                   check=True)
    env = {"PYTHONHOME": sys.base_prefix}
    library = sysconfig.get_config_var("INSTSONAME")
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        subprocess.run(["strip", "--strip-all", "-o", os.path.join(folder, "lib", library),
                        os.path.join(sysconfig.get_config_var("LIBDIR"), library)], check=True)
        env["LD_LIBRARY_PATH"] = os.path.join(folder, "lib")
    program_ = target("busy", python=python, env=env)
    program_.expect("ready")
    mapped = open("/proc/%d/maps" % program_.pid).read()
    assert folder in mapped and sys.base_prefix + "/lib/libpython" not in mapped
    debuggable(attach(dpdb, program_.pid, "--no-pause"))
    session = stop_at_work(dpdb, program_.pid)
    session.sendline("c")
    finish(session)
    release(dpdb, program_)
    program_.finish()


@pytest.mark.parametrize("route, why", [
    ("remote_exec", "DPDB_ATTACH=remote_exec needs CPython 3.14 or later (PEP 768); pid %d runs "),
    ("gdb", "DPDB_ATTACH=gdb is not a route: inject or remote_exec"),
])
def test_a_route_that_cannot_serve_is_refused_and_the_target_untouched(dpdb, target, route, why):
    # PEP 768's sys.remote_exec exists from 3.14 on, which is not installed here: before it,
    # asking for that route is refused before anything touches the process.
    program_ = target("busy")
    program_.expect("ready")
    done = dpdb.run("dpdb", "attach", "-p", str(program_.pid), "--no-pause",
                    env={"DPDB_ATTACH": route})
    assert done.returncode == 1, done.stdout
    message = why % program_.pid if "%d" in why else why
    assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    # Refused before anything started: no hub, and nothing loaded into the process.
    assert "no hub found" in dpdb.run("dpdb", "ls").stderr
    assert "_agent" not in open("/proc/%d/maps" % program_.pid).read()
    program_.finish()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_a_process_of_another_user_is_refused_and_untouched(dpdb, target):
    program_ = target("busy")
    program_.expect("ready")
    nobody = pwd.getpwnam("nobody")

    def as_nobody():
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    runtime = os.path.join(dpdb.root, "nobody-run")
    os.makedirs(runtime, mode=0o700)
    os.chown(runtime, nobody.pw_uid, nobody.pw_gid)
    try:
        done = dpdb.run("dpdb", "attach", "-p", str(program_.pid), "--no-pause",
                        env={"XDG_RUNTIME_DIR": runtime, "HOME": runtime}, preexec_fn=as_nobody)
    except PermissionError:
        pytest.skip("the dpdb executable is not reachable by nobody here")
    assert done.returncode == 1, done.stdout
    assert "belongs to root: only that user or root may debug it" in done.stderr, done.stderr
    program_.finish()


def test_a_prefork_server_attached_as_a_tree(dpdb, target):
    server = target(script=PREFORK)
    line = server.expect("listening")
    port, workers = int(line.split()[1]), [int(w) for w in line.split()[3:]]
    done = debuggable(attach(dpdb, server.pid, "--tree"), count=3)
    assert done.returncode == 0
    assert {p["pid"] for p in dpdb.ls()["processes"]} >= {server.pid, *workers}
    handler = line_of(PREFORK, "server breakpoint here")
    assert dpdb.run("dpdb", "break", "prefork.py:%d" % handler).returncode == 0
    session = dpdb.spawn("dpdb", "attach", "--next")
    session.expect("waiting for the next breakpoint anywhere")
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    client.sendall(b"21\n")
    session.expect(r"attached to session \d+: pid (\d+)")
    assert int(session.match.group(1)) in workers
    session.expect(PROMPT)
    session.sendline("p line")
    session.expect(r"'21\\n'")
    session.expect(PROMPT)
    session.sendline("c")
    finish(session)
    assert client.makefile().readline() == "42\n"
    client.close()
    os.kill(server.pid, signal.SIGTERM)
    server.expect("master done")
    assert server.process.wait(timeout=30) == 0
