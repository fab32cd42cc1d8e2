#!/usr/bin/env python3
"""A condition never true on the hottest line of real programs: pdb against dpdb's engine.

usage: python bench/programs.py [--runs N] [--engine STRATEGY[,STRATEGY...]] [--programs P,...]
                                [--configs C,...] [--seconds S] [INTERPRETER[=PYTHONPATH] ...]

The programs are bench/kinds.py's (one kind of hot line each: a `while` header, generator
expressions, a recursive generator and coroutine, comprehensions, a multi-line call, a closure made
per call...; the hot line is the one marked there, the condition kinds.CONDITIONS') and six of the
pyperformance suite (richards, deltablue, raytrace, nbody, go, float),
as issue 13 tried them: their sources come from the pyperformance wheel (PYPERFORMANCE below,
downloaded with pip into build/bench-cache once, then reused), each program's
data-files/benchmarks/bm_<name>/run_benchmark.py imported as a module and its workload function
called directly (PROGRAMS below), without pyperf's runner.

Those files `import pyperf` unguarded at the top, and nbody's and raytrace's workload functions
read `pyperf.perf_counter()`; the rest of pyperf is used only under `if __name__ == "__main__"`.
So instead of installing pyperf into the interpreters measured, each child puts a stand-in
module `pyperf` into sys.modules holding only `perf_counter` (time.perf_counter): a stand-in for
the benchmark's own clock, which the table does not use (it times the process CPU time itself).

For every program, a short profiling run (sys.settrace in a child process of the first
interpreter, at the program's smallest size) counts the line events in the program's file; the
hottest line is the most-run line where a statement starts. A second traced run picks a local
variable the line reads (not `self`, where there is another) and a condition on it that was never
true there: `VAR == -12345` when every value seen was a number, else `VAR is None`.

Then for every interpreter and program, in fresh processes (time = the process CPU time of the
workload), each paired with a bare run (no debugger) of the same size in the same round:

  pdb_cond    pdb.Pdb, a breakpoint on the hottest line with the condition
  dpdb_cond   NativeEngineMixin + pdb.Pdb (DPDB_ENGINE=native, or --engine), the same breakpoint
  dpdb_log    the same breakpoint made a logpoint (the engine's mark of one), so never due
  dpdb_ignore the same line, a breakpoint without condition ignored for the whole run
  dpdb_unreached  a breakpoint on a line of the file that never runs (in the hot line's code
              object where one such is there): what an armed breakpoint costs where it is not hit
  line_event  3.12+, no debugger: a sys.monitoring LINE event on the hottest line alone, given to
              a builtin that does nothing: the interpreter's own floor for any debugger that
              hooks the line by events (not in the default rows)

once with the condition `0 > 1` and once with the variable's condition (dpdb_ignore,
dpdb_unreached and line_event once). Each debugger stops
once right after set_trace() and continues at once, as a user typing 'c' would. The table shows
the median ratio over N rounds. pdb runs 1/overhead.PDB_REDUCTION of the size (else minutes per
run), marked *: its ratio is against a bare run of that reduced size. A child whose debugger
stopped again (the condition was true) or whose breakpoint counted no hit fails the benchmark.

PYTHONPATH after '=' is where that interpreter finds a dpdb package with its engine built (none
needed for a venv with dpdb installed). --seconds sizes each program to about that bare.
"""
import argparse
import ast
import collections
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import types
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kinds  # noqa: E402  (bench/ is not a package)
import overhead  # noqa: E402

PYPERFORMANCE = "1.11.0"
CACHE = os.path.join(os.path.dirname(HERE), "build", "bench-cache")
CONFIGS = ["pdb_cond", "dpdb_cond", "dpdb_log", "dpdb_ignore", "dpdb_unreached", "line_event"]
# Rows measured once per program, not once per condition.
UNCONDITIONAL = ("dpdb_ignore", "dpdb_unreached", "line_event")
NEVER = "0 > 1"
IGNORE = 10 ** 9


def go_games(module, size):
    # versus_cpu() is one move of the computer, GAMES random playouts deep.
    module.GAMES = size
    module.versus_cpu()


# name: (run `size` of it, the smallest size, about 5-50 ms bare on 3.12)
PROGRAMS = {
    "richards": (lambda module, size: module.Richards().run(size), 1),  # iterations
    "deltablue": (lambda module, size: [module.delta_blue(100) for _ in range(size)], 4),
    "raytrace": (lambda module, size: module.bench_raytrace(1, 100, size, None), 10),  # rows
    "nbody": (lambda module, size: module.bench_nbody(1, "sun", size), 5000),  # advance() steps
    "go": (go_games, 20),
    "float": (lambda module, size: module.benchmark(size), 20000),  # points
}
PROGRAMS.update({name: (lambda module, size, name=name: module.PROGRAMS[name](size), 1)
                 for name in kinds.PROGRAMS})


def sources(cache=CACHE):
    """The folder holding bm_<name>/run_benchmark.py, downloaded and unpacked on first use."""
    unpacked = os.path.join(cache, "pyperformance-" + PYPERFORMANCE)
    benchmarks = os.path.join(unpacked, "pyperformance", "data-files", "benchmarks")
    if os.path.isdir(benchmarks):
        return benchmarks
    os.makedirs(cache, exist_ok=True)
    wheel = os.path.join(cache, "pyperformance-%s-py3-none-any.whl" % PYPERFORMANCE)
    if not os.path.exists(wheel):
        print("downloading pyperformance %s into %s" % (PYPERFORMANCE, cache), file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--only-binary", ":all:", "-d", cache, "pyperformance==" + PYPERFORMANCE],
                       check=True)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked + ".part")
    os.rename(unpacked + ".part", unpacked)
    return benchmarks


def load(benchmarks, name):
    """The program's module, imported as a module (its `__main__` part, pyperf's runner, not run)."""
    if name in kinds.PROGRAMS:
        return kinds
    stand_in = types.ModuleType("pyperf", "stand-in: perf_counter only (see bench/programs.py)")
    stand_in.perf_counter = time.perf_counter
    sys.modules["pyperf"] = stand_in
    path = os.path.join(benchmarks, "bm_" + name, "run_benchmark.py")
    spec = importlib.util.spec_from_file_location("bm_" + name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def traced(module, name, size, local):
    """Runs the program with `local` as the trace function of the frames of its own file."""
    path = module.__file__
    sys.settrace(lambda frame, event, arg: local if frame.f_code.co_filename == path else None)
    try:
        PROGRAMS[name][0](module, size)
    finally:
        sys.settrace(None)


def statement_lines(tree):
    """{line: the statement starting there}, definitions left out (their lines run once)."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.lineno, node)
    return found


def header_nodes(statement):
    """The nodes of the statement but those of the statements it holds (a loop's body...)."""
    for field, value in ast.iter_fields(statement):
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST) and not isinstance(child, (ast.stmt, ast.excepthandler)):
                yield from ast.walk(child)


def equal(value, number):
    """Whether `value == number` would be true, or raise (some __eq__ read the other's fields)."""
    try:
        return bool(value == number)
    except Exception:
        return True


def condition_on(module, name, line, statement):
    """The condition on a local the line reads that was never true at any run of the line."""
    names = []
    for node in header_nodes(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names:
            names.append(node.id)
    names.sort(key=lambda variable: variable == "self")
    # per variable, how often it was: unbound, bound (runs), not a number, None, == -12345 (or
    # raising there)
    seen = collections.defaultdict(collections.Counter)

    def local(frame, event, arg):
        if event == "line" and frame.f_lineno == line:
            code = frame.f_code
            values = frame.f_locals
            for variable in names:
                kinds = seen[variable]
                if variable not in code.co_varnames + code.co_cellvars + code.co_freevars or (
                        variable not in values):
                    kinds["unbound"] += 1
                    continue
                value = values[variable]
                kinds["runs"] += 1
                kinds["other"] += type(value) not in (int, float)
                kinds["none"] += value is None
                kinds["equal"] += equal(value, -12345)
        return local

    traced(module, name, PROGRAMS[name][1], local)
    for variable in names:
        kinds = seen[variable]
        if kinds["unbound"] or not kinds["runs"]:
            continue  # a global, or not always bound there
        if kinds["other"] and not kinds["none"]:
            return "%s is None" % variable
        if not kinds["equal"]:
            return "%s == -12345" % variable
    return None


def unreached_line(module, statements, counts, hot):
    """A statement of the file's functions that never ran, in the hot line's code if it has one."""
    hot_codes = codes_of_line(module, hot)
    cold = []
    for line in sorted(set(statements) - set(counts)):
        try:
            codes = codes_of_line(module, line)
        except SystemExit:
            continue  # module level
        cold.append((not any(code in hot_codes for code in codes), line))
    return min(cold)[1] if cold else kinds.unreached_line()


def profile(benchmarks, name):
    """The hottest line of the program's file (bench/kinds.py: the line marked hot), a realistic
    never-true condition there and a line never reached."""
    module = load(benchmarks, name)
    size = PROGRAMS[name][1]
    counts = collections.Counter()

    def local(frame, event, arg):
        if event == "line":
            counts[frame.f_lineno] += 1
        return local

    traced(module, name, size, local)
    with open(module.__file__) as f:
        text = f.read()
    statements = statement_lines(ast.parse(text))
    if name in kinds.PROGRAMS:
        line = kinds.hot_line(name)
        condition = kinds.CONDITIONS[name]
    else:
        line = max((line for line in counts if line in statements),
                   key=lambda at: (counts[at], -at))
        condition = condition_on(module, name, line, statements[line])
    return {"line": line, "text": text.splitlines()[line - 1].strip(), "hits": counts[line],
            "share": counts[line] / sum(counts.values()), "condition": condition,
            "unreached": unreached_line(module, statements, counts, line)}


def codes_of_line(module, line):
    """The code objects of the module's functions whose instructions include `line`."""
    found = []
    todo = [value.__code__ for value in vars(module).values() if hasattr(value, "__code__")]
    todo += [method.__code__ for cls in vars(module).values() if isinstance(cls, type)
             for method in vars(cls).values() if hasattr(method, "__code__")]
    while todo:
        code = todo.pop()
        if any(at == line for _, _, at in code.co_lines()) and code not in found:
            found.append(code)
        todo.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    if not found:
        raise SystemExit("no function of %s runs line %d" % (module.__file__, line))
    return found


def line_event_only(module, name, line):
    """3.12+: a sys.monitoring LINE event on `line` alone, answered by a builtin that does
    nothing (operator.is_): what the interpreter itself charges for a line event, no debugger."""
    import operator

    monitoring = sys.monitoring
    tool = monitoring.PROFILER_ID
    monitoring.use_tool_id(tool, "line_event")
    monitoring.register_callback(
        tool, monitoring.events.LINE,
        lambda code, at: None if at == line else monitoring.DISABLE)
    for code in codes_of_line(module, line):  # a comprehension's line runs in two
        monitoring.set_local_events(tool, code, monitoring.events.LINE)
    PROGRAMS[name][0](module, PROGRAMS[name][1])  # every other line answers DISABLE once
    monitoring.register_callback(tool, monitoring.events.LINE, operator.is_)


def child(config, benchmarks, name, size, line, condition, unreached):
    module = load(benchmarks, name)
    stops = []
    if config == "line_event":
        line_event_only(module, name, line)
    elif config != "bare":
        import pdb

        bases = (pdb.Pdb,)
        if config.startswith("dpdb"):
            from dpdb._engine import NativeEngineMixin

            bases = (NativeEngineMixin,) + bases
        # set_trace() stops once; every stop continues at once, as a user typing 'c'.
        dbg = type("AutoContinue", bases, {
            "interaction": lambda self, frame, tb: (stops.append(1), self.set_continue())})()
        if config.endswith("unreached"):
            line, condition = unreached, None
        error = dbg.set_break(module.__file__, line, cond=condition)
        if error:
            raise SystemExit("%s:%d: %s" % (module.__file__, line, error))
        if config.endswith("log"):
            # What makes a breakpoint a logpoint to the engine (python/dpdb/_logpoints.py's
            # template); its condition is never true, so no message is due and none is made.
            dbg.get_breaks(module.__file__, line)[0].dpdb_log = "not due"
        if config.endswith("ignore"):
            dbg.get_breaks(module.__file__, line)[0].ignore = IGNORE
        dbg.set_trace()
    start = time.process_time()
    PROGRAMS[name][0](module, size)
    elapsed = time.process_time() - start
    hits = None
    if config not in ("bare", "line_event"):
        sys.settrace(None)
        # dpdb counts the hits of a false condition in C and writes them into the Breakpoint
        # before any pdb command; an empty line is one that does nothing else.
        dbg.onecmd("")
        hits = dbg.get_breaks(module.__file__, line)[0].hits
        if config.endswith("unreached"):
            hits = not hits  # true when never reached, as the check in Program.seconds wants
    print(json.dumps({"seconds": elapsed, "stops": len(stops), "hits": hits}))


def run_child(python, pythonpath, args, engine=None, prefix=(), env=None):
    """The child's JSON line. prefix: a command the interpreter runs under (bench/instructions.py's
    valgrind); env: variables of its own."""
    env = dict(os.environ, **(env or {}))
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    if engine:
        env["DPDB_ENGINE"] = engine
    done = subprocess.run(list(prefix) + [python, os.path.abspath(__file__)] +
                          [str(arg) for arg in args],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if done.returncode != 0:
        raise RuntimeError("%s %s failed:\n%s" % (python, " ".join(map(str, args)), done.stderr))
    return json.loads(done.stdout.strip().splitlines()[-1])


class Program:
    """One program on one interpreter: its children, timed."""

    def __init__(self, python, pythonpath, benchmarks, name, hot):
        self.python, self.pythonpath = python, pythonpath
        self.benchmarks, self.name, self.hot = benchmarks, name, hot

    def seconds(self, config, size, condition=None, engine=None, prefix=(), env=None):
        result = run_child(self.python, self.pythonpath, [
            "--child", config, self.benchmarks, self.name, size, self.hot["line"],
            condition or "", self.hot["unreached"]], engine, prefix, env)
        if config not in ("bare", "line_event") and (result["stops"] != 1 or not result["hits"]):
            raise RuntimeError("%s %s on line %d, %r: %d stops, %s hits (want 1 stop, hits)" % (
                self.name, config, self.hot["line"], condition, result["stops"],
                result["hits"]))
        return result["seconds"]

    def calibrate(self, target):
        size = PROGRAMS[self.name][1]
        while True:
            seconds = self.seconds("bare", size)
            if seconds >= 0.2:
                return max(PROGRAMS[self.name][1], int(size * target / seconds))
            size *= 4

    def ratio(self, runs, config, size, condition, engine):
        ratios = []
        for _ in range(runs):
            bare = self.seconds("bare", size)
            ratios.append(self.seconds(config, size, condition, engine) / bare)
        return statistics.median(ratios)


def conditions_of(hot):
    """(row suffix, condition) per condition measured."""
    found = [("`%s`" % NEVER, NEVER)]
    if hot["condition"]:
        found.append(("variable", hot["condition"]))
    return found


def measure(python, pythonpath, benchmarks, args, hottest, rows):
    cells = {}
    version = overhead.version_of(python)
    for name in args.programs:
        program = Program(python, pythonpath, benchmarks, name, hottest[name])
        full = program.calibrate(args.seconds)
        for index, (suffix, condition) in enumerate(conditions_of(hottest[name])):
            for label, config, engine in rows:
                if config in UNCONDITIONAL and index:
                    continue  # no condition there
                if config == "line_event" and tuple(map(int, version.split("."))) < (3, 12):
                    continue  # no sys.monitoring there
                reduced = config.startswith("pdb")
                size = max(PROGRAMS[name][1], full // overhead.PDB_REDUCTION) if reduced else full
                key = (label if config in UNCONDITIONAL else "%s, %s" % (label, suffix)), name
                # dpdb_ignore's breakpoint has no condition: given `0 > 1`, its row was a
                # never-true condition's with an ignore count that never ran.
                given = None if config in UNCONDITIONAL else condition
                cells[key] = (program.ratio(args.runs, config, size, given, engine), reduced)
                print("  %s %-9s %-28s %6.2fx" % (version, name, key[0], cells[key][0]),
                      file=sys.stderr)
    return version, cells


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        config, benchmarks, name, size, line, condition, unreached = sys.argv[2:9]
        child(config, benchmarks, name, int(size), int(line), condition or None, int(unreached))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--profile":
        print(json.dumps(profile(sys.argv[2], sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds per cell (median)")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="bare run time each program is sized to (default 1)")
    for option, known, default in (("--programs", list(PROGRAMS), list(PROGRAMS)),
                                   ("--configs", CONFIGS, CONFIGS[:2])):
        parser.add_argument(option, type=lambda text, known=known: overhead.names(text, known),
                            default=default, help="comma-separated, of %s (default all)" % (
                                ", ".join(known)))
    parser.add_argument("--engine", default="native",
                        help="DPDB_ENGINE for dpdb_cond, comma-separated for a row each "
                             "(default native)")
    parser.add_argument("interpreters", nargs="*", default=[sys.executable])
    args = parser.parse_args()
    benchmarks = sources()
    first, _, first_path = args.interpreters[0].partition("=")
    hottest = {}
    for name in args.programs:
        hottest[name] = hot = run_child(first, first_path, ["--profile", benchmarks, name])
        print("%s: line %d (%.0f%% of the file's line events): %s; condition %s; unreached %d" % (
            name, hot["line"], 100 * hot["share"], hot["text"], hot["condition"],
            hot["unreached"]), file=sys.stderr)
    rows = overhead.rows_of(args.configs, args.engine.split(","))
    results = []
    for spec in args.interpreters:
        python, _, pythonpath = spec.partition("=")
        print("measuring %s" % python, file=sys.stderr)
        results.append(measure(python, pythonpath, benchmarks, args, hottest, rows))
    labels = list(dict.fromkeys(label for _, cells in results for label, _ in cells))
    header = ["config"] + ["%s %s" % (n, v) for n in args.programs for v, _ in results]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label in labels:
        row = [label] + [overhead.fmt(*cells[label, n]) if (label, n) in cells else "-"
                         for n in args.programs for _, cells in results]
        print("| " + " | ".join(row) + " |")
    print()
    print("| program | hottest line | share of line events | variable condition |")
    print("|---|---|---|---|")
    for name in args.programs:
        hot = hottest[name]
        print("| %s | %d: `%s` | %.0f%% | `%s` |" % (
            name, hot["line"], hot["text"], 100 * hot["share"], hot["condition"]))


if __name__ == "__main__":
    main()
