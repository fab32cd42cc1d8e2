"""`dpdb dap`: the Debug Adapter Protocol over a real multi-process job, driven by Microsoft's own
DAP test client (tests/dap/drive.js, `DebugClient` of @vscode/debugadapter-testsupport from npm)
and, for what that client cannot send (bytes that are no message), by raw frames from here."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys

import pytest

from conftest import DPDB, PROMPT, TIMEOUT, line_of, program, stop, wait_until

PROGRAM = program("dap_job.py")
SINGLE = program("dap_single.py")
RAISE = program("dap_raise.py")
POOL_RAISE = program("pool_raise.py")
POOL = program("dap_pool.py")
RENAME = program("dap_rename.py")
FLOODING = program("dap_flood.py")
LIBRARY = program("dap_library.py")
LATE_IMPORT = program("dap_late_import.py")
DRIVER = os.path.join(os.path.dirname(__file__), os.pardir, "dap", "drive.js")
CHILDREN = os.path.join(os.path.dirname(DRIVER), "children.js")
NAMES = os.path.join(os.path.dirname(DRIVER), "names.js")
FLOOD = os.path.join(os.path.dirname(DRIVER), "flood.js")
LIBRARY_STEPS = os.path.join(os.path.dirname(DRIVER), "library.js")
VERIFIED = os.path.join(os.path.dirname(DRIVER), "verified.js")
NODE_MODULES = os.path.join(os.path.dirname(DRIVER), "node_modules")
NODE = shutil.which("node")


def needs_node():
    if NODE is None:
        pytest.skip("no node: Microsoft's DAP test client runs on node")
    assert os.path.isdir(NODE_MODULES), "run `npm ci --prefix tests/dap` (dev/test does)"


class Job:
    """A standalone hub and `dpdb run` of dap_job.py under it, with no terminal."""

    def __init__(self, dpdb, start=True, script=PROGRAM, args=(), beat=True):
        self.script = script
        self.args = list(args)
        # Whether the program takes the beat file as its first argument.
        self.beat_argument = beat
        self.dpdb = dpdb
        self.socket = os.path.join(dpdb.root, "hub.sock")
        self.env = {"DPDB_HUB": "unix:" + self.socket}
        self.hub = dpdb.spawn("dpdb", "hub", "--socket", self.socket)
        self.hub.expect("dpdb hub listening")
        self.beat = os.path.join(dpdb.root, "beat")
        self.output = open(os.path.join(dpdb.root, "run.out"), "w+")
        self.run = None
        if start:
            self.start()

    def start(self, wait=True):
        dpdb = self.dpdb
        first = [self.beat] if self.beat_argument else []
        self.run = subprocess.Popen([DPDB, "run", self.script] + first + self.args,
                                    env=dict(dpdb.env, **self.env), cwd=dpdb.root,
                                    stdin=subprocess.DEVNULL, stdout=self.output,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        if wait:
            wait_until(lambda: self.beats() >= 0, "the grandchild's first beat")

    def beats(self):
        """How many calls of work() the grandchild made, or -1 while it rewrites the file."""
        try:
            with open(self.beat) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return -1

    def state(self):
        """What the job printed and what the hub lists: to tell, when a test fails, where."""
        self.output.seek(0)
        listed = [self.dpdb.run("dpdb", *command, env=self.env).stdout
                  for command in (("ps",), ("break", "--list"), ("ls",))]
        return "\njob output:\n%s\n%s" % (self.output.read(), "\n".join(listed))

    def close(self):
        if self.run is not None:
            stop(self.run)
        self.output.close()


@pytest.fixture
def job(dpdb):
    job = Job(dpdb)
    yield job
    job.close()


def driver_env(job, **extra):
    env = dict(job.dpdb.env, **job.env, DPDB=DPDB, PROGRAM=PROGRAM,
               LINE_WORK=str(line_of(PROGRAM, "dap: first line of work")),
               LINE_SECOND=str(line_of(PROGRAM, "dap: second line of work")),
               LINE_CALL=str(line_of(PROGRAM, "dap: call of work")))
    env.update(extra)
    return env


def driven_after_the_attach(job, scenario, driver=DRIVER, **extra):
    """A driver scenario that attaches first, says "attached", and then sees the job start."""
    driver = subprocess.Popen([NODE, driver], env=driver_env(job, SCENARIO=scenario, **extra),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=job.dpdb.root, start_new_session=True)
    try:
        assert driver.stdout.readline() == "attached\n", driver.stderr.read()
        job.start(wait=False)
        out, err = driver.communicate(timeout=180)
        assert driver.returncode == 0, out + err + job.state()
        return json.loads(out.strip().splitlines()[-1])
    finally:
        stop(driver)


def drive(job, **extra):
    done = subprocess.run([NODE, DRIVER], env=driver_env(job, **extra), capture_output=True,
                          text=True, timeout=180, cwd=job.dpdb.root)
    assert done.returncode == 0, done.stdout + done.stderr + job.state()
    return json.loads(done.stdout.strip().splitlines()[-1])


def leaves_the_job_running(dpdb, job, seen):
    """After the IDE's disconnect with suspendDebuggee (or its death) the grandchild stays
    paused, unattached, for a terminal, and no breakpoint of the IDE's is left."""
    listing = dpdb.wait_ls(lambda listing: any(
        s["pid"] == seen["pid"] and not s["attached"] for s in listing["sessions"]), env=job.env)
    (session,) = [s for s in listing["sessions"] if s["pid"] == seen["pid"]]
    # The adapter took its breakpoints out before it detached, on the same connection: the hub
    # handles what a client sent before it went, even when an event on the way to it found it gone.
    left = dpdb.run("dpdb", "break", "--list", env=job.env).stdout
    assert "dap_job.py" not in left, "the IDE's breakpoints stayed:\n" + left + job.state()
    terminal = dpdb.spawn("dpdb", "attach", str(session["sid"]), env=job.env)
    terminal.expect(PROMPT)
    # It stands still while paused (-1: paused by the pause button between truncating the file
    # and writing it).
    paused_at = max(job.beats(), 0)
    terminal.sendline("c")
    terminal.expect("session %d continued" % session["sid"])
    try:
        wait_until(lambda: job.beats() > paused_at + 2, "the grandchild running on after the IDE")
    except AssertionError:
        raise AssertionError("the grandchild did not run on; sessions: %s; breakpoints: %s" % (
            dpdb.ls(env=job.env)["sessions"], dpdb.run("dpdb", "break", "--list",
                                                       env=job.env).stdout))


def test_debug_client_over_stdio_stops_a_grandchild_and_steps(dpdb, job):
    needs_node()
    seen = drive(job)
    assert seen["n"] >= 3
    leaves_the_job_running(dpdb, job, seen)


def ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]"])
def test_debug_client_over_a_tcp_port(dpdb, job, host):
    needs_node()
    if host == "[::1]" and not ipv6_loopback():
        pytest.skip("no IPv6 loopback here")
    server = subprocess.Popen([DPDB, "dap", "--listen", host + ":0"],
                              env=dict(dpdb.env, **job.env), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        line = server.stderr.readline()
        port = re.search(r"listening on %s:(\d+)" % re.escape(host), line)
        assert port, line
        seen = drive(job, PORT=port.group(1), HOST=host.strip("[]"))
        leaves_the_job_running(dpdb, job, seen)
    finally:
        stop(server)


def test_a_job_started_after_the_attach_and_the_pause_button(dpdb):
    needs_node()
    job = Job(dpdb, start=False)
    try:
        # The grandchild stops at its first call, before its first beat.
        seen = driven_after_the_attach(job, "late")
        # The IDE's plain disconnect resumed what it had paused: no session is left, it runs on.
        wait_until(lambda: not any(s["pid"] == seen["pid"]
                                   for s in dpdb.ls(env=job.env)["sessions"]),
                   "the paused grandchild resumed by the disconnect")
        running_from = max(job.beats(), 0)
        wait_until(lambda: job.beats() > running_from + 2, "the grandchild running on")
    finally:
        job.close()


@pytest.mark.parametrize("over", ["stdio", "tcp"])
def test_each_process_its_own_child_session(dpdb, over):
    """A client that takes startDebugging gets a child session per process (on stdio another
    `dpdb dap`, over --listen another connection while the job's stays): three pool workers
    stop, each in its own, none continued by a client that continues threads stopping while
    another has the focus (nvim-dap's default), each resumed on its own; the job then ends.
    Their stacks with justMyCode (stdio: its default, on) and without (tcp: off)."""
    needs_node()
    job = Job(dpdb, start=False, script=POOL, beat=False)
    server = None
    port = {}
    try:
        if over == "tcp":
            server = subprocess.Popen([DPDB, "dap", "--listen", "127.0.0.1:0"],
                                      env=dict(dpdb.env, **job.env), stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True, start_new_session=True)
            line = server.stderr.readline()
            found = re.search(r"listening on 127.0.0.1:(\d+)", line)
            assert found, line
            # And with justMyCode off: the frames of multiprocessing and of the parent shown.
            port = {"PORT": found.group(1), "HOST": "127.0.0.1", "JUST_MY_CODE": "off"}
        seen = driven_after_the_attach(job, "children", driver=CHILDREN, PROGRAM=POOL,
                                       LINE_TASK=str(line_of(POOL, "dap_pool: a worker's task")),
                                       **port)
    finally:
        if server is not None:
            stop(server)
        job.close()
    assert seen["autoContinued"] == 0
    assert seen["stops"] == [1, 1, 1]
    assert len(set(seen["resumed"])) == 3


def test_a_thread_takes_the_name_its_process_gets_later(dpdb):
    """A child listed as `pid N first-name` is listed as `pid N renamed-worker` once it renamed
    itself (as launchers name their workers after the start), the same thread."""
    needs_node()
    job = Job(dpdb, start=False, script=RENAME, beat=False)
    try:
        seen = driven_after_the_attach(job, "names", driver=NAMES, DPDB_WORKDIR=dpdb.root)
    finally:
        job.close()
    assert seen["after"].endswith(" renamed-worker"), seen


def test_a_hub_that_stops_reading_never_holds_the_programs_print(dpdb):
    """An IDE copies the job's output; the hub is stopped (SIGSTOP) and the program prints 3 MB,
    more than the socket and the agent's outbox hold: the program goes on all the same, and once
    the hub reads again the IDE gets the first lines, in order, and a line that says how much
    was not copied."""
    needs_node()
    job = Job(dpdb, start=False, script=FLOODING, beat=False)
    driver = subprocess.Popen([NODE, FLOOD], env=driver_env(job), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=dpdb.root,
                              start_new_session=True)
    try:
        assert driver.stdout.readline() == "attached\n", driver.stderr.read()
        job.start(wait=False)
        assert driver.stdout.readline() == "copying\n", driver.stderr.read() + job.state()
        job.hub.kill(signal.SIGSTOP)
        try:
            open(os.path.join(dpdb.root, "hub-stopped"), "w").close()
            wait_until(lambda: os.path.exists(os.path.join(dpdb.root, "printed")),
                       "the program past its prints while the hub is stopped")
        finally:
            job.hub.kill(signal.SIGCONT)
        open(os.path.join(dpdb.root, "end"), "w").close()
        out, err = driver.communicate(timeout=180)
        assert driver.returncode == 0, out + err + job.state()
    finally:
        stop(driver)
        job.close()
    seen = json.loads(out.strip().splitlines()[-1])
    [notice] = seen["notices"]
    assert re.match(r"\[dpdb: \d+ bytes of the program's output not copied: the hub did not "
                    r"take them in time\]\n$", notice), notice


def test_a_breakpoint_is_verified_once_armed(dpdb):
    """Breakpoints set before the job are unverified ("pending"); an event makes each verified
    once the process arms it: at once for a file it can read, and for a module written later only
    once it imports it, through a symlinked directory the IDE names by its real path."""
    needs_node()
    os.mkdir(os.path.join(dpdb.root, "real"))
    os.symlink("real", os.path.join(dpdb.root, "linkdir"))
    plain = os.path.join(dpdb.root, "late_plain.py")
    with open(plain, "w") as module:
        module.write("def plain(x):\n    return x + 1  # the plain line\n")
    job = Job(dpdb, start=False, script=LATE_IMPORT, beat=False)
    try:
        seen = driven_after_the_attach(
            job, "verified", driver=VERIFIED, DPDB_WORKDIR=dpdb.root, PLAIN=plain, LINE_PLAIN="2",
            LINKED=os.path.join(dpdb.root, "real", "late_linked.py"), LINE_LINKED="2")
    finally:
        job.close()
    assert seen["stoppedIn"] == "plain" and seen["verified"] == seen["ids"], seen


@pytest.mark.parametrize("just_my_code", ["on", "off"])
def test_a_step_into_the_standard_library(dpdb, just_my_code):
    """stepIn on a call into json: with justMyCode (the default) the thread lands on the user's
    next line, never in json's code; without, in json.dumps."""
    needs_node()
    job = Job(dpdb, start=False, script=LIBRARY, beat=False)
    try:
        seen = driven_after_the_attach(
            job, "library", driver=LIBRARY_STEPS, PROGRAM=LIBRARY, JUST_MY_CODE=just_my_code,
            LINE_CALL=str(line_of(LIBRARY, "dap_library: the call into the library")),
            LINE_AFTER=str(line_of(LIBRARY, "dap_library: the line after it")))
    finally:
        job.close()
    assert seen["landed"][0].endswith("dap_library.py" if just_my_code == "on" else "__init__.py")


def test_hit_counts_and_function_breakpoints(dpdb):
    needs_node()
    job = Job(dpdb, start=False)
    try:
        leaves_the_job_running(dpdb, job, driven_after_the_attach(job, "hits"))
    finally:
        job.close()


def test_exception_breakpoints_and_the_end_of_the_job(dpdb):
    """`raised` (3.12+) and `uncaught` in a forked child; the repl's `n` and `c`; once the child's
    uncaught exception ended it and the program exited with its status, the IDE is told."""
    needs_node()
    go = os.path.join(dpdb.root, "go")
    job = Job(dpdb, start=False, script=RAISE, args=[go])
    try:
        seen = driven_after_the_attach(
            job, "exceptions", GO=go, RAISED="1" if sys.version_info >= (3, 12) else "0",
            LINE_RAISE=str(line_of(RAISE, "dap: raise")),
            LINE_UNCAUGHT=str(line_of(RAISE, "dap: uncaught")))
        assert seen["exitCode"] == 1, seen
        assert job.run.wait(timeout=TIMEOUT) == 1
        if sys.version_info >= (3, 12):
            # pdb's `next` from the raise: the exception leaves risky(), which pdb shows as its
            # return, or the handler's line in rows().
            assert seen["afterNext"] in ("risky:%d" % line_of(RAISE, "dap: raise"),
                                         "rows:%d" % line_of(RAISE, "dap: handled")), seen
    finally:
        job.close()


def test_uncaught_stops_where_a_pool_catches_the_exception(dpdb):
    """The `uncaught` filter stops in a ProcessPoolExecutor's worker, where the pool catches a
    task's exception to send it to the caller (debugpy's "userUnhandled"); once continued, the
    caller gets its exception and the program ends as it would."""
    needs_node()
    job = Job(dpdb, start=False, script=POOL_RAISE, args=["executor", "spawn"], beat=False)
    try:
        seen = driven_after_the_attach(job, "caught",
                                       LINE_DIVIDE=str(line_of(POOL_RAISE, "# line: divide")))
        assert seen["exitCode"] == 0, seen
        assert job.run.wait(timeout=TIMEOUT) == 0
        job.output.seek(0)
        assert "the caller got ZeroDivisionError" in job.output.read()
    finally:
        job.close()


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ stops on raised exceptions")
def test_raised_exceptions_say_why_not_before_3_12(dpdb, job):
    added = dpdb.run("dpdb", "break", "raised exceptions", env=job.env)
    assert added.returncode == 0, added.stderr
    wait_until(lambda: "need Python 3.12+" in dpdb.run("dpdb", "break", "--list",
                                                       env=job.env).stdout,
               "the processes' note on raised exceptions")


def test_terminate_ends_the_job(dpdb, job):
    needs_node()
    seen = drive(job, SCENARIO="terminate")
    job.run.wait(timeout=TIMEOUT)
    wait_until(lambda: not any(alive(pid) for pid in seen["pids"]), "every process ended")


def alive(pid):
    """Whether a process runs (a zombie waiting for its parent's wait() has ended)."""
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rpartition(") ")[2][:1] != "Z"
    except OSError:
        return False


def test_an_ide_that_dies_leaves_the_job_running(dpdb, job):
    needs_node()
    done = subprocess.run([NODE, DRIVER], env=driver_env(job, SCENARIO="dies"),
                          capture_output=True, text=True, timeout=180, cwd=dpdb.root)
    assert done.returncode == -9, done.stdout + done.stderr  # it killed itself, as planned
    leaves_the_job_running(dpdb, job, json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_terminal_and_the_ide_share_a_session(dpdb, job):
    needs_node()
    added = dpdb.run("dpdb", "break", "%s:%d" % (PROGRAM, line_of(PROGRAM, "dap: first line")),
                     env=job.env)
    assert added.returncode == 0, added.stderr
    listing = dpdb.wait_ls(lambda listing: listing["sessions"], env=job.env)
    dpdb.run("dpdb", "break", "--clear", env=job.env)
    terminal = dpdb.spawn("dpdb", "attach", str(listing["sessions"][0]["sid"]), env=job.env)
    terminal.expect(PROMPT)
    driver = subprocess.Popen([NODE, DRIVER], env=driver_env(job, SCENARIO="shared"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=dpdb.root, start_new_session=True)
    try:
        assert driver.stdout.readline() == "attached\n", driver.stderr.read()
        terminal.sendline("detach")
        out, err = driver.communicate(timeout=180)
        assert driver.returncode == 0, out + err
        leaves_the_job_running(dpdb, job, json.loads(out.strip().splitlines()[-1]))
    finally:
        stop(driver)


def listening(port):
    """Whether a socket listens on 127.0.0.1:port (the kernel's table: connecting would take the
    one IDE connection a DAP server serves)."""
    with open("/proc/net/tcp") as table:
        return any(fields[1] == "0100007F:%04X" % port and fields[3] == "0A"
                   for fields in (line.split() for line in table))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def compare(dpdb, adapter, port, single_env, script=SINGLE, **extra):
    done = subprocess.run(
        [NODE, os.path.join(os.path.dirname(DRIVER), "compare.js")], capture_output=True,
        text=True, timeout=180, cwd=dpdb.root,
        env=dict(dpdb.env, ADAPTER=adapter, PORT=str(port), PROGRAM=script,
                 LINE_WORK=str(line_of(SINGLE, "dap: first line of work")), **single_env,
                 **extra))
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def against_debugpy(dpdb, script, **extra):
    """The flow of compare.js against debugpy 1.8, then against `dpdb dap`, on one program:
    what each adapter showed."""
    needs_node()
    debugpy = pytest.importorskip("debugpy")  # dev/test installs it in every venv
    assert debugpy.__version__.startswith("1.8"), debugpy.__version__
    port = free_port()
    env = {k: v for k, v in dpdb.env.items() if k != "PYTHONBREAKPOINT"}
    beat = os.path.join(dpdb.root, "beat")
    reference = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen",
                                  "127.0.0.1:%d" % port, script, beat],
                                 env=env, cwd=dpdb.root, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
    try:
        wait_until(lambda: listening(port), "debugpy listening")
        theirs = compare(dpdb, "debugpy", port, {}, script, **extra)
    finally:
        stop(reference)
    job = Job(dpdb, start=False, script=script)
    job.start(wait=False)
    server = subprocess.Popen([DPDB, "dap", "--listen", "127.0.0.1:0"],
                              env=dict(dpdb.env, **job.env), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        port = int(re.search(r":(\d+)$", server.stderr.readline().strip()).group(1))
        ours = compare(dpdb, "dpdb", port, job.env, script, **extra)
    finally:
        stop(server)
        job.close()
    return theirs, ours


def test_the_same_flow_against_debugpy(dpdb):
    """What an IDE does, step for step the same against debugpy 1.8 and `dpdb dap`, on one
    single-process program (bench/dap times the two)."""
    against_debugpy(dpdb, SINGLE)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="raised exceptions need 3.12+ here")
def test_the_same_exception_flow_against_debugpy(dpdb):
    """The `raised` filter: both adapters stop at the raise with reason exception, and say the
    same in exceptionInfo and the stack (docs/ide.md: where they differ after a continue)."""
    theirs, ours = against_debugpy(dpdb, RAISE, MODE="exceptions",
                                   LINE_RAISE=str(line_of(RAISE, "dap: raise")))
    assert ours["verified"] == [True] and theirs["verified"] in (None, [True]), (ours, theirs)
    assert ours["stops"][0] == theirs["stops"][0], (ours, theirs)
    # After a continue, dpdb stops at the next raise: once per exception, in the first frame of
    # your code it reaches (debugpy stops again as the same exception enters the caller).
    assert ours["stops"][1] == ours["stops"][0], ours
    assert ours["stops"][0] == {"reason": "exception", "exceptionId": "ValueError",
                                "breakMode": "always", "description": "bad row N",
                                "frame": "risky:%d" % line_of(RAISE, "dap: raise"),
                                "caller": "rows"}


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="needs root, to connect as another user, and /usr/bin/python3")
def test_the_tcp_port_serves_only_its_own_user(dpdb):
    server = subprocess.Popen([DPDB, "dap", "--listen", "127.0.0.1:0"], env=dpdb.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        port = int(re.search(r":(\d+)$", server.stderr.readline().strip()).group(1))
        initialize = frame({"seq": 1, "type": "request", "command": "initialize",
                            "arguments": {"adapterID": "python"}})
        stranger = (
            "import socket, sys\n"
            "s = socket.create_connection(('127.0.0.1', %d))\n"
            "s.sendall(sys.stdin.buffer.read())\n"
            "try:\n"
            "    sys.stdout.buffer.write(s.recv(65536))\n"
            "except ConnectionResetError:\n"
            "    pass\n" % port)
        # The system's interpreter: another user may not be able to run the test's (under /root).
        refused = subprocess.run(["/usr/bin/python3", "-c", stranger], input=initialize,
                                 capture_output=True, timeout=TIMEOUT,
                                 preexec_fn=lambda: os.setuid(65534))
        assert refused.returncode == 0 and refused.stdout == b"", refused
        assert "refused a connection of uid 65534" in server.stderr.readline()
        with socket.create_connection(("127.0.0.1", port)) as own:
            own.sendall(initialize)
            assert read_message(own.makefile("rb"))["success"] is True
    finally:
        stop(server)


def frame(message):
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_message(stream):
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        byte = stream.read(1)
        assert byte, "dpdb dap closed its output; read so far: %r" % header
        header += byte
    length = int(re.search(rb"Content-Length: (\d+)", header).group(1))
    return json.loads(stream.read(length))


def test_malformed_input_gets_error_responses_and_the_adapter_lives_on(dpdb):
    adapter = subprocess.Popen([DPDB, "dap"], env=dpdb.env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        sent = [
            (b"Content-Length: 7\r\n\r\n{nope!}", "malformed message: not JSON"),
            (b"Content-Type: text\r\n\r\n", "without Content-Length"),
            (b"Content-Length: x1\r\n\r\n", "not a number"),
            (frame([1, 2]), "not an object"),
            (frame({"seq": 4, "type": "request"}), "a request needs"),
            (frame({"seq": 5, "type": "request", "command": "fly"}), 'unknown request "fly"'),
            (frame({"seq": 6, "type": "request", "command": "stackTrace",
                    "arguments": {"threadId": "one"}}), "before attach"),
        ]
        for data, expected in sent:
            adapter.stdin.write(data)
            adapter.stdin.flush()
            answer = read_message(adapter.stdout)
            assert answer["type"] == "response" and answer["success"] is False, answer
            assert expected in answer["message"], answer
        adapter.stdin.write(frame({"seq": 7, "type": "request", "command": "initialize",
                                   "arguments": {"adapterID": "python"}}))
        adapter.stdin.flush()
        answer = read_message(adapter.stdout)
        assert answer["success"] is True and answer["request_seq"] == 7, answer
        adapter.stdin.close()  # the IDE goes away: the adapter ends, quietly
        assert adapter.wait(timeout=TIMEOUT) == 0
    finally:
        if adapter.poll() is None:
            adapter.kill()
            adapter.wait()


def test_an_attach_naming_a_process_it_cannot_show_says_why(dpdb, job):
    """A child session's attach names its process by "pid": a pid that is no number above 0, or
    no process of the job, is an error response, and the adapter lives on or ends, never hangs."""
    adapter = subprocess.Popen([DPDB, "dap"], env=dict(dpdb.env, **job.env),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        requests = [({"adapterID": "python"}, "initialize", None),
                    ({"pid": -3}, "attach", '"pid" names a process'),
                    ({"pid": 2 ** 31 - 1}, "attach", "no process 2147483647 in this job")]
        for seq, (arguments, command, refusal) in enumerate(requests, 1):
            adapter.stdin.write(frame({"seq": seq, "type": "request", "command": command,
                                       "arguments": arguments}))
            adapter.stdin.flush()
            answer = read_message(adapter.stdout)
            assert answer["request_seq"] == seq, answer
            assert answer["success"] is (refusal is None), answer
            assert refusal is None or refusal in answer["message"], answer
        # Nothing to show: the adapter has ended.
        assert adapter.wait(timeout=TIMEOUT) == 0
    finally:
        if adapter.poll() is None:
            adapter.kill()
            adapter.wait()
