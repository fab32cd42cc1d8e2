#!/usr/bin/env python3
"""Instructions an armed but never hit breakpoint costs, counted by valgrind (callgrind).

usage: python bench/instructions.py [--size K] [--workloads W,...] [--configs C,...]
                                    [--engine STRATEGY[,STRATEGY...]] [INTERPRETER[=PYTHONPATH]]
       python bench/instructions.py --programs P,... [--against C,...] [--milliseconds T] [--keep DIR]
                                    [--engine STRATEGY[,STRATEGY...]] [INTERPRETER[=PYTHONPATH]]

Wall time on a shared 2-core machine cannot tell 1.00x from 1.05x in one cell (bench/overhead's
noise is about 5%); an instruction count can, and it is the same from run to run. Each
configuration of bench/overhead.py runs its workload K and 2K times under callgrind (with
PYTHONHASHSEED=0, so dict probes repeat); the difference is what K runs of the workload cost,
start-up, imports and the debugger's set-up cancelled out. The table is that cost against the bare
run's. Instructions are not time (a mispredicted branch or a cache miss costs more than an add),
so read it beside bench/overhead, not instead of it.

--programs counts bench/programs.py's programs (bench/kinds.py's and the pyperformance six; `all`
for every one) the same way, through programs.py's own child: bare against dpdb_unreached (a
breakpoint on a line of the program's file that never runs, in the hot line's code object where
there is one), K sized so that the bare run takes about T ms outside valgrind (calibrated like
programs.py, default 20). --keep DIR keeps the callgrind outputs (DIR/NAME-CONFIG-SIZE.out), for
callgrind_annotate. --against C,... counts other configs of programs.py instead (dpdb_cond: the
program's never-true condition on a variable of the hot line; line_event: the interpreter's floor). The hot and unreached lines are found by the interpreter running this script
(3.10+), as programs.py finds them with its first.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import programs  # noqa: E402
from overhead import CONFIGS, WORKLOADS, names, rows_of, version_of  # noqa: E402

# pdb under callgrind would take many minutes: the table compares dpdb's strategies with bare.
DPDB_CONFIGS = [c for c in CONFIGS if c.startswith("dpdb")]
ENV = {"PYTHONHASHSEED": "0"}


def callgrind(out):
    return ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]


def collected(out):
    """The total of a callgrind output file."""
    with open(out) as f:
        found = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    if not found:
        raise RuntimeError("no total in " + out)
    return int(found.group(1))


def instructions(python, pythonpath, config, workload, size, engine):
    env = dict(os.environ, **ENV)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    if engine:
        env["DPDB_ENGINE"] = engine
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "callgrind.out")
        done = subprocess.run(
            callgrind(out) + [python, os.path.join(HERE, "overhead.py"), "--child", config,
                              workload, str(size)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if done.returncode != 0:
            raise RuntimeError("%s %s %s failed:\n%s" % (python, config, workload, done.stderr))
        return collected(out)


def cost(python, pythonpath, config, workload, size, engine=None):
    """Instructions of `size` runs of the workload, without start-up and set-up."""
    once = instructions(python, pythonpath, config, workload, size, engine)
    twice = instructions(python, pythonpath, config, workload, 2 * size, engine)
    return twice - once


def condition_for(program, config):
    """The never-true condition a conditional config puts on the hot line: the program's own on
    one of its variables (programs.py's "variable" row), else `0 > 1`."""
    if config in programs.UNCONDITIONAL:
        return None
    return program.hot["condition"] or programs.NEVER


def program_cost(program, config, size, engine, keep):
    """Instructions of `size` of the program, through programs.py's child (which checks that the
    unreached breakpoint was armed and never hit)."""
    counts = []
    with tempfile.TemporaryDirectory() as scratch:
        for run in (size, 2 * size):
            out = os.path.join(keep or scratch, "%s-%s-%d.out" % (program.name, config, run))
            program.seconds(config, run, condition_for(program, config), engine, callgrind(out),
                            ENV)
            counts.append(collected(out))
    return counts[1] - counts[0]


def measure_programs(python, pythonpath, args):
    benchmarks = programs.sources()
    engines = args.engine.split(",")
    against = args.against
    columns = [(c, e) for c in against for e in (engines if c.startswith("dpdb") else [None])]
    print("| program | K | bare (instructions) | " +
          " | ".join("%s (%s)" % (c, e) if e else c for c, e in columns) + " |")
    print("|" + "---|" * (3 + len(columns)))
    ratios = {col: [] for col in columns}
    for name in args.programs:
        # Profiled by this script's interpreter, as programs.py profiles with its first one:
        # finding the code objects of a line needs co_lines() (3.10+).
        hot = programs.run_child(sys.executable, "", ["--profile", benchmarks, name])
        program = programs.Program(python, pythonpath, benchmarks, name, hot)
        size = program.calibrate(args.milliseconds / 1000.0)
        bare = program_cost(program, "bare", size, None, args.keep)
        cells = []
        for config, engine in columns:
            ratios[config, engine].append(program_cost(program, config, size, engine,
                                                       args.keep) / bare)
            cells.append("%.4fx" % ratios[config, engine][-1])
        print("| %s | %d | %d | %s |" % (name, size, bare, " | ".join(cells)), flush=True)
    product = {col: 1.0 for col in columns}
    for col in columns:
        for ratio in ratios[col]:
            product[col] *= ratio
    print("| geometric mean (%s) | | | %s |" % (version_of(python), " | ".join(
        "%.4fx" % product[col] ** (1.0 / len(ratios[col])) for col in columns)))


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
    parser.add_argument("--programs", type=lambda t: list(programs.PROGRAMS) if t == "all" else
                        names(t, programs.PROGRAMS),
                        help="comma-separated, of %s, or all" % ", ".join(programs.PROGRAMS))
    parser.add_argument("--milliseconds", type=float, default=20,
                        help="--programs: bare time each program is sized to (default 20)")
    parser.add_argument("--against", type=lambda t: names(t, programs.CONFIGS[1:]),
                        default=["dpdb_unreached"],
                        help="--programs: configs counted against bare, comma-separated, of %s "
                        "(default dpdb_unreached)" % ", ".join(programs.CONFIGS[1:]))
    parser.add_argument("--keep", help="--programs: folder to keep the callgrind outputs in")
    parser.add_argument("interpreter", nargs="?", default=sys.executable)
    args = parser.parse_args()
    python, _, pythonpath = args.interpreter.partition("=")
    if args.programs:
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
        measure_programs(python, pythonpath, args)
        return
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
