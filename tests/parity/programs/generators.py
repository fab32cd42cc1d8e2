import helper


def pipeline(n):
    squares = helper.gen(n)
    total = 0
    for sq in squares:
        total += sq
    return total


def manual():
    g = helper.gen(3)
    first = next(g)
    second = next(g)
    rest = list(g)
    return first, second, rest


def main():
    breakpoint()
    t = pipeline(4)
    m = manual()
    print(t, m)


main()
