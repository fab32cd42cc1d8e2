import helper


def add(a, b):
    total = a + b
    return total


def loop(n):
    acc = 0
    for i in range(n):
        acc = add(acc, i)
        if i == 3:
            acc += helper.twice(i)
    return acc


def main():
    breakpoint()
    x = 1
    y = loop(6)
    z = add(x, y)
    print("result", z)
    return z


main()
