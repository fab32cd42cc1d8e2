class Bag:
    def __init__(self, n):
        self.items = list(range(n))


def while_header(n):
    i = total = 0
    while i < n:
        total += i
        i += 1
    return total


def genexpr_in_if(rows, limit):
    count = 0
    for row in rows:
        if any(v > limit for v in row):
            count += 1
    return count


def genexpr_in_sum(values, scale):
    return sum(v * scale for v in values)


def walk(depth):
    if depth < 3:
        yield from walk(depth + 1)
        yield depth


async def visit(depth):
    if depth > 0:
        await visit(depth - 1)
    return depth


def for_attribute(bag):
    total = 0
    for item in bag.items:
        total += item
    return total


def dict_of_lists(n):
    return {k: [k * v + n for v in range(3)] for k in range(n)}


def combine(a, b, scale=1):
    return (a + b) * scale


def multi_line_call(n):
    total = 0
    for i in range(n):
        total += combine(
            i,
            i + 1,
            scale=2,
        )
    return total


def make_adder(n):
    def add(x):
        return x + n

    return add


def run_coroutine(coroutine):
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value


def main():
    breakpoint()
    print("while", while_header(6))
    print("gen_if", genexpr_in_if([[1, 2], [3, 9], [4, 5]], 8))
    print("gen_sum", genexpr_in_sum([1, 2, 3, 4], 3))
    print("walk", list(walk(0)))
    print("visit", run_coroutine(visit(4)))
    print("for", for_attribute(Bag(5)))
    print("dict", dict_of_lists(3))
    print("multi", multi_line_call(4))
    print("adders", [make_adder(k)(10) for k in range(4)])
    print("done")


main()
