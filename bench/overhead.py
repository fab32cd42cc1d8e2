#!/usr/bin/env python3
"""Overhead of an armed but never hit breakpoint, and of one whose condition is never true: pdb
against dpdb's engine.

usage: python bench/overhead.py [--runs N] [--engine STRATEGY[,STRATEGY...]] [--workloads W,...]
                                [--configs C,...] [INTERPRETER[=PYTHONPATH] ...]

For every interpreter (default: this one) and workload (call-heavy, loop-heavy, stdlib-heavy;
each sized to about one second bare), runs in fresh processes:

  bare        no debugger
  pdb_other   pdb.Pdb, breakpoint in another file
  pdb_same    pdb.Pdb, also an unreached breakpoint inside the hot function
  pdb_cond    pdb.Pdb, also a breakpoint on the line that runs most, with a condition never true
              there (workloads.CONDITIONS: 'n < 0' on fib's first line for call-heavy)
  dpdb_other  NativeEngineMixin + pdb.Pdb (DPDB_ENGINE=native), breakpoint in another file
  dpdb_same   the same with the unreached breakpoint inside the hot function
  dpdb_cond   the same with pdb_cond's conditional breakpoint (--engine nocond: conditions left
              to bdb)

Each debugger stops once right after set_trace() and continues at once, as a user typing 'c'
would, so that the timed region runs "armed but not hit". Time is the process CPU time of the
timed region. Each debugger run is paired with a bare run of the same size in the same round;
the table shows the median ratio over N rounds. Cells marked * ran a reduced size (pdb would
take minutes), the ratio is still against a bare run of that reduced size.

PYTHONPATH after '=' is where that interpreter finds a dpdb package with its engine built.
--engine sets DPDB_ENGINE for the dpdb configurations (default native; e.g. noswap on 3.11 for
the engine without swap mode); several, comma-separated, give each dpdb configuration a row per
strategy, each paired with bare runs of its own as above. --workloads and --configs measure only some cells (a
single cell with many --runs resolves a few per cent where a whole table cannot).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = ["pdb_other", "pdb_same", "pdb_cond", "dpdb_other", "dpdb_same", "dpdb_cond"]
WORKLOADS = ["call", "loop", "std"]
PDB_REDUCTION = 40


def child(config, workload, size):
    sys.path.insert(0, HERE)
    import other
    import workloads

    run = workloads.WORKLOADS[workload]
    if config != "bare":
        import pdb

        if config.startswith("dpdb"):
            from dpdb._engine import NativeEngineMixin

            base = type("P", (NativeEngineMixin, pdb.Pdb), {})
        else:
            base = pdb.Pdb

        class AutoContinue(base):
            def interaction(self, frame, traceback):
                self.set_continue()

        dbg = AutoContinue()
        dbg.set_break(other.__file__, other.OTHER_LINE)
        if config.endswith("same"):
            dbg.set_break(workloads.__file__, workloads.marked_line(workload))
        if config.endswith("cond"):
            dbg.set_break(workloads.__file__, workloads.marked_line(workload, "COND"),
                          cond=workloads.CONDITIONS[workload])
        dbg.set_trace()
    start = time.process_time()
    run(size)
    elapsed = time.process_time() - start
    print(json.dumps({"seconds": elapsed}))


def run_child(python, pythonpath, config, workload, size, engine="native"):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    if config.startswith("dpdb"):
        env["DPDB_ENGINE"] = engine
    out = subprocess.run(
        [python, os.path.abspath(__file__), "--child", config, workload, str(size)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if out.returncode != 0:
        raise RuntimeError("%s %s %s failed:\n%s" % (python, config, workload, out.stderr))
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def calibrate(python, pythonpath, workload, target=1.0):
    size = 1
    while True:
        seconds = run_child(python, pythonpath, "bare", workload, size)
        if seconds >= 0.2:
            return max(1, int(size * target / seconds))
        size *= 4


def version_of(python):
    return subprocess.check_output(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        universal_newlines=True).strip()


def rows_of(configs, engines):
    """(label, config, engine) per row: a dpdb configuration gets a row per strategy."""
    rows = []
    for config in configs:
        if not config.startswith("dpdb"):
            rows.append((config, config, None))
            continue
        for engine in engines:
            label = config if len(engines) == 1 else "%s (%s)" % (config, engine)
            rows.append((label, config, engine))
    return rows


def measure(python, pythonpath, runs, workloads, rows):
    cells = {}
    for workload in workloads:
        full = calibrate(python, pythonpath, workload)
        for label, config, engine in rows:
            reduced = config.startswith("pdb")
            size = max(1, full // PDB_REDUCTION) if reduced else full
            ratios = []
            for _ in range(runs):
                bare = run_child(python, pythonpath, "bare", workload, size)
                debugged = run_child(python, pythonpath, config, workload, size, engine)
                ratios.append(debugged / bare)
            cells[label, workload] = (statistics.median(ratios), reduced)
            print("  %s %-10s %-4s %6.2fx" % (version_of(python), label, workload,
                                              cells[label, workload][0]), file=sys.stderr)
    return cells


def names(text, known):
    chosen = text.split(",")
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        raise argparse.ArgumentTypeError("unknown: %s (known: %s)" % (
            ", ".join(unknown), ", ".join(known)))
    return chosen


def fmt(ratio, reduced):
    text = "%.2fx" % ratio if ratio < 10 else "%.0fx" % ratio
    return text + ("*" if reduced else "")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds per cell (median)")
    parser.add_argument("--engine", default="native",
                        help="DPDB_ENGINE for the dpdb configurations, comma-separated for a row "
                             "each (default native)")
    parser.add_argument("--workloads", type=lambda t: names(t, WORKLOADS), default=WORKLOADS,
                        help="comma-separated, of %s (default all)" % ", ".join(WORKLOADS))
    parser.add_argument("--configs", type=lambda t: names(t, CONFIGS), default=CONFIGS,
                        help="comma-separated, of %s (default all)" % ", ".join(CONFIGS))
    parser.add_argument("interpreters", nargs="*", default=[sys.executable])
    args = parser.parse_args()
    rows = rows_of(args.configs, args.engine.split(","))
    results = []
    for spec in args.interpreters:
        python, _, pythonpath = spec.partition("=")
        version = version_of(python)
        print("measuring %s (%s)" % (version, python), file=sys.stderr)
        results.append((version, measure(python, pythonpath, args.runs, args.workloads, rows)))
    header = ["config"] + ["%s %s" % (v, w) for v, _ in results for w in args.workloads]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, _, _ in rows:
        row = [label] + [fmt(*cells[label, w]) for _, cells in results for w in args.workloads]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
