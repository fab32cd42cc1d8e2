import helper


def fact(n):
    if n <= 1:
        return 1
    sub = fact(n - 1)
    return n * sub


def main():
    breakpoint()
    f = fact(5)
    g = helper.fib(6)
    print(f, g)


main()
