import types


def work(n):
    total = 0
    for i in range(n):
        sq = i * i
        total += sq
    return total


class Guard:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def guarded(items):
    acc = []
    for x in items:
        try:
            with Guard():
                acc.append(100 // x)
        except ZeroDivisionError:
            acc.append(-1)
    return acc


def risky(v):
    if v < 0:
        raise ValueError(v)
    return v


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def counter(n):
    for i in range(n):
        got = i * 10
        yield got


@types.coroutine
def pause():
    yield


async def co(n):
    total = 0
    for i in range(n):
        await pause()
        total += i
    return total


def drive(c):
    while True:
        try:
            c.send(None)
        except StopIteration as stop:
            return stop.value


def main():
    g = counter(3)
    first = next(g)
    c = co(3)
    c.send(None)
    breakpoint()
    print("work", work(5), work(3))
    print("guarded", guarded([1, 0]))
    try:
        risky(-1)
    except ValueError as exc:
        print("caught", exc)
    print("fact", fact(4))
    print("counter", first, list(g))
    print("co", drive(c))


main()
