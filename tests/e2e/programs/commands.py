"""A small program to exercise pdb's commands on; a test compares what dpdb prints with what the
interpreter's own pdb prints for the same commands."""

import sys


def square(n):
    result = n * n
    return result


def total_of(count):
    total = 0
    for i in range(count):  # line: loop
        total += square(i)
    total = total * 1  # line: after loop
    return total


def describe(data):
    names = sorted(data)
    width = max(len(name) for name in names)
    return [name.ljust(width) for name in names]


def main():
    data = {"alpha": 1, "beta": [1, 2, 3], "gamma": "text"}
    count = 3
    breakpoint()
    total = total_of(count)  # line: total
    labels = describe(data)  # line: labels
    sys.stdout.write("total %d, %d labels\n" % (total, len(labels)))
    return total


if __name__ == "__main__":
    main()
    sys.stdout.write("program done\n")
