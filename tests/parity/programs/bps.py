import helper


def add(a, b):
    total = a + b
    return total


def loop(n):
    acc = 0
    for i in range(n):
        acc = add(acc, i)
        acc += helper.twice(i)
    return acc


def main():
    breakpoint()
    first = loop(8)
    second = loop(5)
    print("results", first, second)


main()
