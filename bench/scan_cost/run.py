"""What a new breakpoint file costs while breakpoints are armed (3.12's scan mode scans the heap
then), against the same under DPDB_ENGINE=noscan (a global PY_START, no scan) and under pdb.

usage: python bench/scan_cost/run.py [--functions N] [--objects N] [--files N]

The program holds N functions (each with its own code object, in 100 files) and N objects
(dicts, lists, instances) more for the collector to list; a debugger is armed with a breakpoint
and continued, then breakpoints are set in --files new files one after the other. Prints the
median and largest wall time of one set_break, per debugger, measured in the same run."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = ("pdb", "dpdb native", "dpdb noscan")


def write_sources(directory, functions, files):
    per_file = max(1, functions // 100)
    paths = []
    for n in range(100 + files):
        path = os.path.join(directory, "mod%03d.py" % n)
        with open(path, "w") as out:
            for i in range(per_file if n < 100 else 1):
                out.write("def f%d(x):\n    y = x + %d\n    return y\n\n" % (i, i))
        paths.append(path)
    return paths[:100], paths[100:]


def child(config, directory, functions, objects, files):
    import pdb

    heap_files, new_files = write_sources(directory, functions, files)
    namespaces = []
    for path in heap_files:
        namespace = {"__name__": os.path.basename(path)[:-3]}
        with open(path) as source:
            exec(compile(source.read(), path, "exec"), namespace)
        namespaces.append(namespace)
    ballast = [{"i": i, "l": [i]} for i in range(objects // 2)]
    if config == "pdb":
        base = pdb.Pdb
    else:
        from dpdb._engine import NativeEngineMixin

        base = type("P", (NativeEngineMixin, pdb.Pdb), {})

    class AutoContinue(base):
        def interaction(self, frame, traceback):
            self.set_continue()

    dbg = AutoContinue()
    dbg.set_break(heap_files[0], 2)
    dbg.set_trace()
    times = []
    for path in new_files:
        start = time.perf_counter()
        dbg.set_break(path, 2)
        times.append(time.perf_counter() - start)
    print("%s %f %f" % (config, statistics.median(times), max(times)))
    del ballast, namespaces  # the heap the scans walked, alive until the measurement is done


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=100_000)
    parser.add_argument("--objects", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.functions, args.objects, args.files)
        return
    print("Python %s, %d functions, %d more objects, a breakpoint in each of %d new files" % (
        sys.version.split()[0], args.functions, args.objects, args.files))
    with tempfile.TemporaryDirectory() as directory:
        for config in CONFIGS:
            env = dict(os.environ)
            env.pop("DPDB_ENGINE", None)
            if config.startswith("dpdb"):
                env["DPDB_ENGINE"] = config.split()[1]
            line = subprocess.check_output(
                [sys.executable, __file__, "--child", config, directory, "--functions",
                 str(args.functions), "--objects", str(args.objects), "--files",
                 str(args.files)], env=env, universal_newlines=True).split()
            print("  %-12s set_break median %7.2f ms, largest %7.2f ms" % (
                config, float(line[-2]) * 1e3, float(line[-1]) * 1e3))


if __name__ == "__main__":
    main()
