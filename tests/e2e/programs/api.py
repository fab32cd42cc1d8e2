"""dpdb's Python API called directly: post_mortem() on a handled exception, set_trace() with a
header; and its arguments echoed, to show they reach the program untouched."""

import sys

import dpdb


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def compute():
    try:
        ratio = 1 / 0  # line: raise
    except ZeroDivisionError:
        dpdb.post_mortem()
        ratio = None
    value = 7
    dpdb.set_trace(header="api header for value")
    say("value %d ratio %s" % (value, ratio))


if __name__ == "__main__":
    say("args %s" % sys.argv[1:])
    compute()
    say("program done")
