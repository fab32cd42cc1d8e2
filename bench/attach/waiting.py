"""What `dpdb attach -p` takes on a program whose main thread waits in C code:
bench/attach/waiting.py [--modes sleep,recv,lock] [--rounds N]  (PYTHON picks the interpreter).

The target is tests/e2e/programs/attach/waiting.py, started plainly (the interpreter beside this
one's base, without dpdb in its environment). For each mode, the median of N rounds, each on a
new target:

  first       from starting `dpdb attach -p PID --no-pause` to its end (the agent loaded, linked)
  second      the same after `dpdb detach -p`: the agent is there, it is debugged again
  notice      from starting `dpdb attach -p PID` (which pauses) to its line saying what the main
              thread waits in
  prompt      from starting it to the prompt of the session over the waiting thread's frames
  stop        from the signal that ends the wait to the prompt of its stop at the next line
  py-spy      `py-spy dump --pid PID` (if py-spy is on PATH), which loads nothing
  debugpy     from starting `python -m debugpy --listen 127.0.0.1:PORT --pid PID` (gdb injects
              it; if debugpy imports here and gdb is on PATH) to its port taking a connection:
              ready for an IDE, which would still have to pause it

The `dpdb` executable beside this interpreter (or on PATH) is used. Needs pexpect."""
import argparse
import importlib.util
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

import pexpect

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from dpdb_bench import dpdb_executable, private_environment  # noqa: E402

PLAIN_PYTHON = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
TARGET = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "e2e", "programs",
                      "attach", "waiting.py")


def start(mode, env):
    env = {k: v for k, v in env.items() if not k.startswith("DPDB_")}
    env.pop("PYTHONBREAKPOINT", None)
    process = subprocess.Popen([PLAIN_PYTHON, "-u", TARGET, mode], stdout=subprocess.PIPE,
                               text=True, env=env, start_new_session=True)
    assert process.stdout.readline().startswith("ready")
    return process


def timed(command, env):
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(command), done.stderr))
    return time.perf_counter() - started


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def debugpy_ready(pid, env):
    """Seconds from `debugpy --pid` to its listening port; it stays in the target (the round's
    last step)."""
    port = free_port()
    started = time.perf_counter()
    timed([sys.executable, "-m", "debugpy", "--listen", "127.0.0.1:%d" % port, "--pid", pid], env)
    deadline = started + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return time.perf_counter() - started
        except OSError:
            if time.perf_counter() > deadline:
                sys.exit("debugpy --pid %s never listened on port %d" % (pid, port))
            time.sleep(0.01)


def one_round(dpdb, mode, env, py_spy, debugpy):
    process = start(mode, env)
    pid = str(process.pid)
    times = {"first": timed([dpdb, "attach", "-p", pid, "--no-pause"], env)}
    timed([dpdb, "detach", "-p", pid], env)
    times["second"] = timed([dpdb, "attach", "-p", pid, "--no-pause"], env)
    started = time.perf_counter()
    child = pexpect.spawn(dpdb, ["attach", "-p", pid], env=env, encoding="utf-8", timeout=60)
    child.expect("main thread waits in C code")
    times["notice"] = time.perf_counter() - started
    child.expect(r"\(Pdb\) ")
    times["prompt"] = time.perf_counter() - started
    started = time.perf_counter()
    process.send_signal(signal.SIGUSR1)
    child.expect("The wait ended")
    child.expect(r"\(Pdb\) ")
    times["stop"] = time.perf_counter() - started
    child.sendline("c")
    child.expect(pexpect.EOF)
    timed([dpdb, "detach", "-p", pid], env)
    if py_spy:
        times["py-spy"] = timed([py_spy, "dump", "--pid", pid], env)
    if debugpy:
        times["debugpy"] = debugpy_ready(pid, env)
    os.killpg(process.pid, signal.SIGKILL)  # waitpid's child too
    process.wait()
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="sleep,recv,lock")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    dpdb = dpdb_executable()
    py_spy = shutil.which("py-spy") or shutil.which("py-spy", path=os.path.dirname(sys.executable))
    print("dpdb attach -p on a waiting main thread, Python %d.%d (%s), median of %d rounds" % (
        sys.version_info[0], sys.version_info[1], PLAIN_PYTHON, args.rounds))
    debugpy = shutil.which("gdb") is not None and importlib.util.find_spec("debugpy") is not None
    columns = ["first", "second", "notice", "prompt", "stop"] + (["py-spy"] if py_spy else []) + (
        ["debugpy"] if debugpy else [])
    print("  %-16s" % "mode" + "".join("%10s" % c for c in columns))
    with private_environment() as env:
        for mode in args.modes.split(","):
            rounds = [one_round(dpdb, mode, env, py_spy, debugpy) for _ in range(args.rounds)]
            print("  %-16s" % mode + "".join(
                "%9.3fs" % statistics.median(r[c] for r in rounds) for c in columns))
        subprocess.run([dpdb, "hub", "--stop"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
