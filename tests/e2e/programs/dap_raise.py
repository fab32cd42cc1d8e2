"""Exceptions for `dpdb dap`'s exception breakpoints: a forked child raises and catches a
ValueError at every row; once the file GO exists it raises a KeyError it does not catch, and
the program ends with the child's status. Arguments: BEAT GO; BEAT alone: the rows in this one
process, without the uncaught end (for the same flow against debugpy)."""

import multiprocessing
import os
import sys
import time


def risky(n):
    raise ValueError("bad row %d" % n)  # dap: raise


def rows(beat_file, go_file):
    for n in range(3000):  # bounded: ten minutes at most
        try:
            risky(n)
        except ValueError:
            pass  # dap: handled
        with open(beat_file, "w") as beat:
            beat.write("%d\n" % n)
        if go_file is not None and os.path.exists(go_file):
            {}["missing"]  # dap: uncaught
        time.sleep(0.2)


if __name__ == "__main__":
    if len(sys.argv) == 2:
        rows(sys.argv[1], None)
    else:
        worker = multiprocessing.get_context("fork").Process(target=rows, args=sys.argv[1:3])
        worker.start()
        worker.join()
        sys.exit(worker.exitcode)
