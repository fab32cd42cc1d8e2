#!/usr/bin/env python3
"""What stopping on raised exceptions costs while nothing stops (an IDE's `raised` exception
filter; `dpdb break 'raised exceptions'`), against no debugger and against pdb, in one run.

usage: python bench/exceptions/run.py [--runs N] [--rounds R] VENV [VENV ...]

Each VENV has dpdb installed. Two workloads (bench/exceptions/hot.py): `calls` raises nothing,
`raises` has the standard library raise and handle an exception every round (a raise outside
your code: dpdb looks at it and does not stop). Rows, each as a ratio to a bare run of the same
size in the same round, median of N:

  settrace     a trace function that sees exceptions and no lines (the cheapest way before 3.12)
  pdb          pdb.Pdb holding a breakpoint that never stops (it traces every line)
  dpdb         `dpdb run` with no breakpoint
  dpdb_raised  `dpdb run` with the hub's "raised exceptions" armed (3.12+: sys.monitoring RAISE)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hot.py")
ROWS = ("settrace", "pdb", "dpdb", "dpdb_raised")


def elapsed(output):
    for line in output.splitlines():
        if line.startswith("elapsed "):
            return float(line.split()[1])
    raise RuntimeError("no timing in: %s" % output)


class Job:
    def __init__(self, venv, root):
        self.python = os.path.join(venv, "bin", "python")
        self.dpdb = os.path.join(venv, "bin", "dpdb")
        self.socket = os.path.join(root, "hub.sock")
        self.env = dict(os.environ, DPDB_HUB="unix:" + self.socket, XDG_RUNTIME_DIR=root)
        self.hub = subprocess.Popen([self.dpdb, "hub", "--socket", self.socket, "--state-dir",
                                     os.path.join(root, "state"), "--quiet"], env=self.env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):  # bounded: 10 s
            if os.path.exists(self.socket + ".token"):
                break
            time.sleep(0.05)

    def dpdb_cmd(self, *args):
        done = subprocess.run([self.dpdb] + list(args), env=self.env, capture_output=True,
                              text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return done.stdout

    def plain(self, workload, rounds, *watcher):
        return elapsed(subprocess.run([self.python, HOT, workload, str(rounds)] + list(watcher),
                                      capture_output=True, text=True, check=True).stdout)

    def row(self, name, workload, rounds):
        if name in ("settrace", "pdb"):
            return self.plain(workload, rounds, name)
        self.dpdb_cmd("break", "--clear")
        if name == "dpdb_raised":
            self.dpdb_cmd("break", "raised exceptions")
        done = subprocess.run([self.dpdb, "run", HOT, workload, str(rounds)], env=self.env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=600)
        return elapsed(done.stdout)

    def close(self):
        self.hub.terminate()
        self.hub.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=200000)
    parser.add_argument("venvs", nargs="+")
    options = parser.parse_args()
    print("rounds %d; each row against a bare run in the same round; median of %d"
          % (options.rounds, options.runs))
    for venv in options.venvs:
        root = tempfile.mkdtemp(prefix="dpdb-bench-")
        job = Job(venv, root)
        try:
            version = subprocess.run(
                [job.python, "-c", "import sys; print(sys.version.split()[0])"],
                capture_output=True, text=True).stdout.strip()
            print("\nPython %s" % version)
            print("  %-12s %8s %8s" % ("", "calls", "raises"))
            for name in ROWS:
                cells = []
                for workload in ("calls", "raises"):
                    ratios = [job.row(name, workload, options.rounds)
                              / job.plain(workload, options.rounds)
                              for _ in range(options.runs)]
                    cells.append("%7.2fx" % statistics.median(ratios))
                print("  %-12s %8s %8s" % (name, cells[0], cells[1]), flush=True)
        finally:
            job.close()


if __name__ == "__main__":
    sys.exit(main())
