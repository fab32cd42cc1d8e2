def hot(k):
    acc = 0
    for i in range(k):
        acc += i
    return acc


def make_adder(n):
    def add(x):
        y = x + n
        return y

    return add


class Box:
    def __init__(self, v):
        self.v = v

    def bump(self):
        self.v += 1
        return self.v


def gen(n):
    for i in range(n):
        v = i * 2
        yield v


def loop(n, out, started):
    started.set()
    for _ in range(n):
        out.append(hot(2))
