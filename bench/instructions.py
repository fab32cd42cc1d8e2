#!/usr/bin/env python3
"""Instructions an armed but never hit breakpoint costs, counted by valgrind (callgrind).

usage: python bench/instructions.py [--size K] [--workloads W,...] [--configs C,...]
                                    [--engine STRATEGY[,STRATEGY...]] [INTERPRETER[=PYTHONPATH]]

Wall time on a shared 2-core machine cannot tell 1.00x from 1.05x in one cell (bench/overhead's
noise is about 5%); an instruction count can, and it is the same from run to run. Each
configuration of bench/overhead.py runs its workload K and 2K times under callgrind (with
PYTHONHASHSEED=0, so dict probes repeat); the difference is what K runs of the workload cost,
start-up, imports and the debugger's set-up cancelled out. The table is that cost against the bare
run's. Instructions are not time (a mispredicted branch or a cache miss costs more than an add),
so read it beside bench/overhead, not instead of it.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from overhead import CONFIGS, WORKLOADS, names, rows_of  # noqa: E402

# pdb under callgrind would take many minutes: the table compares dpdb's strategies with bare.
DPDB_CONFIGS = [c for c in CONFIGS if c.startswith("dpdb")]


def instructions(python, pythonpath, config, workload, size, engine):
    env = dict(os.environ, PYTHONHASHSEED="0")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    if engine:
        env["DPDB_ENGINE"] = engine
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python,
         os.path.join(HERE, "overhead.py"), "--child", config, workload, str(size)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or not found:
        raise RuntimeError("%s %s %s failed:\n%s" % (python, config, workload, out.stderr))
    return int(found.group(1))


def cost(python, pythonpath, config, workload, size, engine=None):
    """Instructions of `size` runs of the workload, without start-up and set-up."""
    once = instructions(python, pythonpath, config, workload, size, engine)
    twice = instructions(python, pythonpath, config, workload, 2 * size, engine)
    return twice - once


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=2,
                        help="workload size K (bench/overhead.py's unit; default 2)")
    parser.add_argument("--engine", default="native",
                        help="DPDB_ENGINE strategies, comma-separated (default native)")
    parser.add_argument("--workloads", type=lambda t: names(t, WORKLOADS), default=["call"],
                        help="comma-separated, of %s (default call)" % ", ".join(WORKLOADS))
    parser.add_argument("--configs", type=lambda t: names(t, DPDB_CONFIGS), default=DPDB_CONFIGS,
                        help="comma-separated, of %s" % ", ".join(DPDB_CONFIGS))
    parser.add_argument("interpreter", nargs="?", default=sys.executable)
    args = parser.parse_args()
    python, _, pythonpath = args.interpreter.partition("=")
    rows = rows_of(args.configs, args.engine.split(","))
    print("| config | " + " | ".join(args.workloads) + " |")
    print("|" + "---|" * (len(args.workloads) + 1))
    bare = {w: cost(python, pythonpath, "bare", w, args.size) for w in args.workloads}
    print("| bare (instructions) | " + " | ".join("%d" % bare[w] for w in args.workloads) + " |")
    for label, config, engine in rows:
        cells = ["%.4fx" % (cost(python, pythonpath, config, w, args.size, engine) / bare[w])
                 for w in args.workloads]
        print("| %s | %s |" % (label, " | ".join(cells)))


if __name__ == "__main__":
    main()
