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
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from hub_job import HubJob  # noqa: E402  (bench/, beside this folder)

HOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hot.py")
ROWS = ("settrace", "pdb", "dpdb", "dpdb_raised")



class Job(HubJob):
    def row(self, name, workload, rounds):
        if name in ("settrace", "pdb"):
            return self.timed(HOT, workload, str(rounds), name)
        self.dpdb_cmd("break", "--clear")
        if name == "dpdb_raised":
            self.dpdb_cmd("break", "raised exceptions")
        return self.timed_under_dpdb(HOT, workload, str(rounds))


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
            version = job.python_version()
            print("\nPython %s" % version)
            print("  %-12s %8s %8s" % ("", "calls", "raises"))
            for name in ROWS:
                cells = []
                for workload in ("calls", "raises"):
                    ratios = [job.row(name, workload, options.rounds)
                              / job.timed(HOT, workload, str(options.rounds))
                              for _ in range(options.runs)]
                    cells.append("%7.2fx" % statistics.median(ratios))
                print("  %-12s %8s %8s" % (name, cells[0], cells[1]), flush=True)
        finally:
            job.close()


if __name__ == "__main__":
    sys.exit(main())
