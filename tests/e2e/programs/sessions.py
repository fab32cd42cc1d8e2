"""Stops once at a breakpoint() in main, then calls work() three times; with `again`, work(2)
calls breakpoint() too. With `--wait-for PATH` it first waits for a line on the FIFO at PATH."""

import os
import sys

history = []


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def work(i):
    value = i * 10
    if i == 2 and "again" in sys.argv:
        breakpoint()
    history.append(value)
    return value


def main():
    say("main pid %d" % os.getpid())
    if "--wait-for" in sys.argv:
        with open(sys.argv[sys.argv.index("--wait-for") + 1]) as fifo:
            fifo.readline()
    first = "first stop"  # for the debugger to look at
    breakpoint()
    results = [work(i) for i in range(3)]
    say("results %s" % results)


if __name__ == "__main__":
    main()
    say("program done")
