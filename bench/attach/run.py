"""What `dpdb attach -p` costs: bench/attach/run [--windows N] [--window SECONDS].

A call-heavy program runs plainly (the interpreter beside this one's base, without dpdb in its
environment) and reports its rounds per window. Measured in the same run:

  listed      from starting `dpdb attach -p PID --no-pause` to the process in `dpdb ls --json`
  prompt      from starting `dpdb attach -p PID` (which pauses) to its prompt, in a terminal
  speed       rounds per window after the attach (nothing armed) and after `dpdb detach`, against
              the same program never attached (its own first windows, and a second plain run)

The `dpdb` executable beside this interpreter (or on PATH) is used. Needs pexpect."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import pexpect

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from dpdb_bench import dpdb_executable, private_environment  # noqa: E402

PLAIN_PYTHON = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])


class Program:
    def __init__(self, window, env):
        env = {k: v for k, v in env.items() if not k.startswith("DPDB_")}
        env.pop("PYTHONBREAKPOINT", None)
        self.process = subprocess.Popen([PLAIN_PYTHON, os.path.join(HERE, "program.py"),
                                         str(window)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)
        self.pid = int(self.process.stdout.readline().split()[1])

    def windows(self, count):
        rates = []
        while len(rates) < count:
            line = self.process.stdout.readline()
            if line.startswith("rounds"):
                rates.append(int(line.split()[1]))
        return rates

    def skip_current(self):
        self.windows(1)  # a window that straddles an attach or a detach is not counted

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def seconds_until_listed(dpdb, env, pid):
    started = time.perf_counter()
    done = subprocess.run([dpdb, "attach", "-p", str(pid), "--no-pause"], env=env,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit("attach failed: " + done.stderr)
    while True:
        listing = subprocess.run([dpdb, "ls", "--json"], env=env, capture_output=True, text=True)
        if any(p["pid"] == pid for p in json.loads(listing.stdout or "{}").get("processes", [])):
            return time.perf_counter() - started
        time.sleep(0.005)


def seconds_until_prompt(dpdb, env, pid):
    started = time.perf_counter()
    child = pexpect.spawn(dpdb, ["attach", "-p", str(pid)], env=env, encoding="utf-8",
                          timeout=60)
    child.expect(r"\(Pdb\) ")
    elapsed = time.perf_counter() - started
    child.sendline("c")
    child.expect(pexpect.EOF)
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--window", type=float, default=0.5)
    args = parser.parse_args()
    dpdb = dpdb_executable()
    with private_environment() as env:
        never = Program(args.window, env)
        never_rates = never.windows(2 * args.windows)
        never.stop()

        program = Program(args.window, env)
        before = program.windows(args.windows)
        listed = seconds_until_listed(dpdb, env, program.pid)
        program.skip_current()
        attached = program.windows(args.windows)
        prompt = seconds_until_prompt(dpdb, env, program.pid)
        program.skip_current()
        subprocess.run([dpdb, "detach", "-p", str(program.pid)], env=env, capture_output=True)
        program.skip_current()
        detached = program.windows(args.windows)
        program.stop()
        subprocess.run([dpdb, "hub", "--stop"], env=env, capture_output=True)

    base = statistics.median(never_rates + before)
    print("dpdb attach on Python %d.%d (%s), %d windows of %.1fs each" % (
        sys.version_info[0], sys.version_info[1], PLAIN_PYTHON, args.windows, args.window))
    print("  attach -p to listed by dpdb ls: %.3f s" % listed)
    print("  attach -p to the prompt (--pause): %.3f s" % prompt)
    print("  rounds per window, never attached: %d (median of %d)" % (
        base, len(never_rates + before)))
    for name, rates in (("attached, nothing armed", attached), ("after detach", detached)):
        median = statistics.median(rates)
        print("  %-24s %d   %.3fx the time of never attached" % (name + ":", median,
                                                                base / median))


if __name__ == "__main__":
    main()
