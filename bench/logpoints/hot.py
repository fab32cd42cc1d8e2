"""The timed program of bench/logpoints/run.py: a hot loop calling a small function, N rounds;
prints the CPU time of the loop. With `pdb`, pdb.Pdb holds a breakpoint on the hot line whose
condition is never true (as `b hot.py:LINE, i < 0` typed at pdb's prompt, then `c`)."""

import sys
import time


def step(i, acc):
    return acc + i * i


def work(n):
    acc = 0
    for i in range(n):
        acc = step(i, acc)  # the hot line
    return acc


def main():
    rounds = int(sys.argv[1])
    if sys.argv[2:] == ["pdb"]:
        import pdb

        class Continue(pdb.Pdb):
            def interaction(self, frame, traceback):
                self.set_continue()

        debugger = Continue()
        with open(__file__) as f:
            hot = next(n for n, line in enumerate(f, 1) if "# the hot line" in line)
        debugger.set_break(__file__, hot, cond="i < 0")
        debugger.set_trace()
    start = time.process_time()
    acc = work(rounds)
    print("elapsed %.6f %d" % (time.process_time() - start, acc), flush=True)


main()
