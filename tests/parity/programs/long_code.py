# A function long enough that its exception table's offsets take two bytes (past 64 code units):
# a conditional line inside a `try` whose first instruction raises in the first run (a local not
# bound yet), one in an inlined comprehension, and one in a `with` block: on 3.12+ each is
# displaced into a fast copy's tail, which must keep its handler.
import contextlib


def tally(rows):
    seen = []
    total = 0
    for i, row in enumerate(rows):
        names = [str(cell) for cell in row]
        width = max(len(name) for name in names)
        seen.append((i, width, ",".join(names)))
        try:
            total = extra + total + sum(row)
        except NameError:
            total -= 1
        extra = i
        table = {k: [k * v + i for v in range(3)] for k in range(2)}
        with contextlib.suppress(KeyError):
            total += table[i % 3][1]
    return total, len(seen)


def main():
    breakpoint()
    print("tally", tally([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]))
    print("done")


main()
