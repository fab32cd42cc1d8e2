"""How fast a due stop reaches the prompt, pdb against dpdb: bench/stop_latency/run [--stops N]
[--runs R].

The same program runs under the interpreter's own pdb (`python program.py`, breakpoint() is
pdb.set_trace) and under `dpdb run` (the prompt crosses agent, hub and client), each in a
pseudo-terminal driven as a user would: at the first prompt `b program.py:LINE` then `c`, and `c`
at every stop after. Measured, wall time seen from the terminal:

  first prompt   start of the command to its first prompt (interpreter start-up included)
  stop           from sending `c` to the next prompt: continue, run to the breakpoint (a little
                 work, fib(12)), stop, print the location, prompt

The `dpdb` executable beside the interpreter (or on PATH) is used. Needs pexpect."""
import argparse
import os
import re
import statistics
import sys
import time

import pexpect

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from dpdb_bench import dpdb_executable, private_environment  # noqa: E402

PROGRAM = os.path.join(HERE, "program.py")
PROMPT = re.compile(r"\(Pdb\) ")


def stop_line():
    with open(PROGRAM) as source:
        for number, text in enumerate(source, 1):
            if "# STOP_LINE" in text:
                return number
    raise SystemExit("no STOP_LINE in " + PROGRAM)


def one_run(command, env, stops):
    """(seconds to the first prompt, [seconds of each stop])."""
    start = time.perf_counter()
    child = pexpect.spawn(command[0], command[1:], env=env, encoding="utf-8", timeout=60)
    child.delaybeforesend = None  # pexpect's default sleeps 50 ms before each line it sends
    try:
        child.expect(PROMPT)
        first = time.perf_counter() - start
        child.sendline("b %s:%d" % (PROGRAM, stop_line()))
        child.expect(PROMPT)
        times = []
        for _ in range(stops):
            sent = time.perf_counter()
            child.sendline("c")
            child.expect(PROMPT)
            times.append(time.perf_counter() - sent)
        child.sendline("clear 1")
        child.expect(PROMPT)
        child.sendline("c")
        child.expect("program done")
        return first, times
    finally:
        child.close(force=True)


def summary(values):
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return statistics.median(ordered) * 1000, p90 * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stops", type=int, default=30, help="stops per run")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    dpdb = dpdb_executable()
    with private_environment(PYTHONUNBUFFERED="1") as env:
        env.pop("PYTHONBREAKPOINT", None)
        measure(dpdb, env, args)


def measure(dpdb, env, args):
    total = args.stops + 1  # the loop runs once more after the last measured stop
    commands = {
        "pdb": [sys.executable, PROGRAM, str(total)],
        "dpdb": [dpdb, "run", "--python", sys.executable, PROGRAM, str(total)],
    }
    results = {name: ([], []) for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():  # interleaved, so that drift hits both
            first, stops = one_run(command, env, args.stops)
            results[name][0].append(first)
            results[name][1].extend(stops)
    version = "%d.%d" % sys.version_info[:2]
    print("Python %s, %d runs x %d stops (ms, median / p90)" % (version, args.runs, args.stops))
    print("| | first prompt | stop |")
    print("|---|---|---|")
    for name, (firsts, stops) in results.items():
        print("| %s | %.1f / %.1f | %.2f / %.2f |" % ((name,) + summary(firsts) + summary(stops)))
    pdb_stop = summary(results["pdb"][1])[0]
    dpdb_stop = summary(results["dpdb"][1])[0]
    print("dpdb stop / pdb stop: %.2fx" % (dpdb_stop / pdb_stop))


if __name__ == "__main__":
    main()
