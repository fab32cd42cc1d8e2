#!/usr/bin/env python3
"""What a logpoint costs while its line runs and its message is not due, against no debugger and
against pdb holding the same conditional breakpoint, measured in the same run.

usage: python bench/logpoints/run.py [--runs N] [--rounds R] VENV [VENV ...]

Each VENV is a virtual environment with dpdb installed (bin/python, bin/dpdb). A standalone hub
(`dpdb hub`, a state directory of its own) holds the one global breakpoint of each row; the
program runs under `dpdb run` joined to it, and times its hot loop itself (process CPU time, so
start-up and the hub are outside it):

  bare              no debugger
  pdb_cond          pdb.Pdb, `b hot.py:LINE, i < 0` on the hot line
  dpdb_cond         dpdb break hot.py:LINE --cond 'i < 0' (a breakpoint that never stops)
  dpdb_log_never    dpdb break hot.py:LINE --cond 'i < 0' --log '...' (a logpoint never due)
  dpdb_log_always   dpdb break hot.py:LINE --log 'step {i}' (every hit: rate-limited, the rest
                    dropped and counted)

The debugger rows run R/40 rounds (pdb at full size would take minutes), each paired with a bare
run of that size in the same round; the table shows the median ratio over N runs.
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from hub_job import HubJob  # noqa: E402  (bench/, beside this folder)

HERE = os.path.dirname(os.path.abspath(__file__))
HOT = os.path.join(HERE, "hot.py")
REDUCTION = 40
CONFIGS = {
    "pdb_cond": None,
    "dpdb_cond": ["--cond", "i < 0"],
    "dpdb_log_never": ["--cond", "i < 0", "--log", "step {i}: {acc}"],
    "dpdb_log_always": ["--log", "step {i}: {acc}"],
}


def hot_line():
    with open(HOT) as f:
        return next(n for n, line in enumerate(f, 1) if "# the hot line" in line)



class Job(HubJob):
    def bare(self, rounds):
        return self.timed(HOT, str(rounds))

    def config(self, name, rounds):
        if name == "pdb_cond":
            return self.timed(HOT, str(rounds), "pdb")
        self.dpdb_cmd("break", "--clear")
        self.dpdb_cmd("break", "hot.py:%d" % hot_line(), *CONFIGS[name])
        return self.timed_under_dpdb(HOT, str(rounds))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2000000)
    parser.add_argument("venvs", nargs="+")
    options = parser.parse_args()
    small = options.rounds // REDUCTION
    print("rounds: bare %d, debugger rows %d (each against bare of that size); median of %d"
          % (options.rounds, small, options.runs))
    for venv in options.venvs:
        root = tempfile.mkdtemp(prefix="dpdb-bench-")
        job = Job(venv, root)
        try:
            version = job.python_version()
            full = statistics.median(job.bare(options.rounds) for _ in range(options.runs))
            print("\nPython %s  bare: %.3f s for %d rounds" % (version, full, options.rounds))
            for name in CONFIGS:
                ratios = []
                for _ in range(options.runs):
                    ratios.append(job.config(name, small) / job.bare(small))
                print("  %-16s %6.1fx" % (name, statistics.median(ratios)))
        finally:
            job.close()


if __name__ == "__main__":
    sys.exit(main())
