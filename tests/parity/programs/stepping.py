import helper


def inner(v):
    w = v + 1
    w = w * 2
    return w


def outer(n):
    out = []
    for i in range(n):
        out.append(inner(i))
    total = sum(out)
    return total


def main():
    breakpoint()
    a = outer(3)
    b = helper.twice(a)
    for k in range(3):
        b += k
    print("done", a, b)
    return b


main()
