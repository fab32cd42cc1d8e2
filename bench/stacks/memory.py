"""What `dpdb stacks -p PID` takes read from memory (no agent), against `py-spy dump --pid` on the
same target: bench/stacks/memory.py [--rounds N] [--pythons 3.9,3.10,...]

For each interpreter found (under pyenv's versions, else python3.X on PATH), the target is
tests/e2e/programs/stacks/outside.py started plainly (two threads waiting, nine frames). Each
round runs both commands once, in turn, each timed whole (process start included): the median
and maximum of N rounds, and dpdb's median over py-spy's. Every dpdb answer is checked (both
threads, named, with their frames), so a fast wrong answer is not counted as fast.

The `dpdb` executable beside this interpreter (or on PATH) is used; py-spy beside it or on PATH
(PyPI's py-spy)."""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from dpdb_bench import dpdb_executable, private_environment  # noqa: E402

TARGET = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "e2e", "programs",
                      "stacks", "outside.py")
# The main thread's kernel wait in time.sleep: clock_nanosleep from 3.11 on, select before.
SLEEPS = ("hrtimer_nanosleep", "poll_schedule_timeout", "do_select")


def patch_level(path):
    name = path.split(os.sep)[-3]  # versions/3.12.1/bin/python3.12
    return int(name.split(".")[2]) if name.count(".") == 2 and name.split(".")[2].isdigit() else -1


def interpreter(version):
    """The newest pyenv install of 3.X, else python3.X on PATH (pyenv's shims on PATH run only
    the selected versions); None if neither."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    installs = sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin",
                                             "python" + version)), key=patch_level)
    return installs[-1] if installs else shutil.which("python" + version)


class Target:
    """outside.py, started plainly; ready once its main thread sleeps."""

    def __init__(self, python, env):
        env = {k: v for k, v in env.items()
               if not k.startswith("DPDB_") and k not in ("PYTHONPATH", "PYTHONBREAKPOINT")}
        self.process = subprocess.Popen([python, "-u", TARGET], stdout=subprocess.PIPE,
                                        text=True, env=env, start_new_session=True)
        self.pid = str(self.process.pid)
        if self.process.stdout.readline().split()[:1] != ["ready"]:
            self.stop()
            sys.exit("%s: the target did not start" % python)
        deadline = time.monotonic() + 30
        while not self._main_sleeps():
            if time.monotonic() > deadline:
                self.stop()
                sys.exit("%s: the target's main thread never slept" % python)
            time.sleep(0.05)

    def _main_sleeps(self):
        with open("/proc/%s/wchan" % self.pid) as f:
            return f.read().startswith(SLEEPS)

    def stop(self):
        self.process.kill()
        self.process.wait()
        self.process.stdout.close()


def timed(command, env):
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(command), done.stderr or done.stdout))
    return elapsed, done.stdout


class Refused(Exception):
    """dpdb stacks -p said it cannot read this interpreter (its one-line reason)."""


def check(answer, version):
    (process,) = json.loads(answer)
    if "error" in process:
        raise Refused(process["error"])
    threads = process["stacks"]["threads"]
    names = [t["name"] for t in threads]
    named = names == ["MainThread", "waiter"]
    if process.get("read_from_memory") != version or not named or not all(
            t["frames"] for t in threads):
        sys.exit("dpdb stacks -p answered wrongly: %s" % answer)


def measure(dpdb, py_spy, version, python, rounds, env):
    target = Target(python, env)
    try:
        memory_env = dict(env, DPDB_STACKS="memory")
        ours, theirs = [], []
        for _ in range(rounds):
            elapsed, answer = timed([dpdb, "stacks", "--json", "-p", target.pid], memory_env)
            check(answer, version)
            ours.append(elapsed)
            theirs.append(timed([py_spy, "dump", "--pid", target.pid], env)[0])
    finally:
        target.stop()
    return ours, theirs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--pythons", default="3.9,3.10,3.11,3.12,3.13")
    args = parser.parse_args()
    dpdb = dpdb_executable()
    py_spy = shutil.which("py-spy", path=os.path.dirname(sys.executable)) or shutil.which(
        "py-spy")
    if not py_spy:
        sys.exit("no py-spy beside %s or on PATH (pip install py-spy)" % sys.executable)
    spy_version = subprocess.run([py_spy, "--version"], capture_output=True,
                                 text=True).stdout.strip()
    print("dpdb stacks -p (read from memory) against %s, median (max) of %d rounds, load %.1f" % (
        spy_version, args.rounds, os.getloadavg()[0]))
    print("%-8s %-8s %-22s %-22s %s" % ("python", "version", "dpdb stacks -p", "py-spy dump",
                                        "dpdb / py-spy"))
    with private_environment() as env:
        for version in args.pythons.split(","):
            python = interpreter(version)
            if python is None:
                print("%-8s not found" % version)
                continue
            full = subprocess.run([python, "-c", "import platform; print("
                                   "platform.python_version())"], capture_output=True,
                                  text=True).stdout.strip()
            try:
                ours, theirs = measure(dpdb, py_spy, version, python, args.rounds, env)
            except Refused as e:
                print("%-8s %-8s refused: %s" % (version, full, e))
                continue
            print("%-8s %-8s %-22s %-22s %.2f" % (
                version, full,
                "%.1f ms (%.1f)" % (1000 * statistics.median(ours), 1000 * max(ours)),
                "%.1f ms (%.1f)" % (1000 * statistics.median(theirs), 1000 * max(theirs)),
                statistics.median(ours) / statistics.median(theirs)))


if __name__ == "__main__":
    main()
