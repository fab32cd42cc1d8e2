"""The timed program of bench/exceptions/run.py: WORKLOAD (calls | raises) for ROUNDS, then the
CPU time of the loop. `calls`: a small function called in a loop, nothing raised. `raises`: the
standard library raising and handling an exception in every round (os.path.exists of a missing
path: os.stat raises FileNotFoundError inside genericpath, which catches it).

The third argument picks a watcher started in this process: `settrace` (the cheapest way to see
raises before 3.12: a trace function whose frames report exceptions but no lines), `pdb`
(pdb.Pdb in continue state with a breakpoint that never stops, so it traces)."""

import os
import sys
import time

MISSING = "/nonexistent/dpdb-bench"


def step(i, acc):
    return acc + i * i


def calls(n):
    acc = 0
    for i in range(n):
        acc = step(i, acc)
    return acc


def raises(n):
    found = 0
    for _ in range(n):
        found += os.path.exists(MISSING)
    return found


def settrace_watcher():
    seen = []

    def local(frame, event, arg):
        if event == "exception":
            seen.append(arg[0])
            seen.clear()
        return local

    def watch(frame, event, arg):
        frame.f_trace_lines = False
        return local

    sys.settrace(watch)


def pdb_watcher():
    import pdb

    class Continue(pdb.Pdb):
        def interaction(self, frame, traceback):
            self.set_continue()

    debugger = Continue()
    debugger.set_break(__file__, step.__code__.co_firstlineno + 1, cond="i < 0")
    debugger.set_trace()


def main():
    workload, rounds = {"calls": calls, "raises": raises}[sys.argv[1]], int(sys.argv[2])
    watcher = sys.argv[3] if len(sys.argv) > 3 else None
    if watcher == "settrace":
        settrace_watcher()
    elif watcher == "pdb":
        pdb_watcher()
    start = time.process_time()
    result = workload(rounds)
    print("elapsed %.6f %d" % (time.process_time() - start, result), flush=True)


main()
