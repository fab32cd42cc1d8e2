def twice(v):
    doubled = v * 2
    return doubled


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def gen(n):
    for i in range(n):
        yield i * i
    return "done"


def boom(x):
    if x > 2:
        raise ValueError("boom %d" % x)
    return x
