"""Programs whose hottest line is not a plain statement of a plain function (issue 31's kinds).

bench/programs.py measures them next to the pyperformance programs: each entry of PROGRAMS runs
`size` rounds of one kind of code, and its hottest line carries the comment `# hot: NAME`, where
programs.py sets the breakpoint. CONDITIONS holds, per program, a condition on a local of that
line which is never true there.
"""
import re


def plus_one(x): return x + 1  # hot: one_line  # noqa: E704 (the kind measured: a one-line def)


def one_line(size):
    total = 0
    for i in range(size * 64):
        total += plus_one(i)
    return total


def while_header(size):
    i = total = 0
    while i < size * 64:  # hot: while_header
        total += i & 7
        i += 1
    return total


ROWS = [[j, j + 1, j + 2, j + 3] for j in range(8)]


def genexpr_in_if(size):
    count, limit = 0, -1
    for i in range(size * 16):
        if any(value < limit for value in ROWS[i & 7]):  # hot: genexpr_in_if
            count += 1
    return count


def genexpr_in_sum(size):
    values = list(range(16))
    total = 0
    for i in range(size * 4):
        total += sum(value * i for value in values)  # hot: genexpr_in_sum
    return total


class Node:
    __slots__ = ("left", "right", "value")

    def __init__(self, depth, value=0):
        self.value = value
        self.left = Node(depth - 1, 2 * value) if depth else None
        self.right = Node(depth - 1, 2 * value + 1) if depth else None


def walk(node, depth):
    if depth >= 0:  # hot: recursive_generator
        if node.left is not None:
            yield from walk(node.left, depth + 1)
        yield node.value
        if node.right is not None:
            yield from walk(node.right, depth + 1)


TREE = Node(6)


def recursive_generator(size):
    return sum(sum(walk(TREE, 0)) for _ in range(size // 2 + 1))


async def visit(depth):
    if depth <= 0:  # hot: recursive_coroutine
        return 1
    return await visit(depth - 1) + await visit(depth - 1)


def recursive_coroutine(size):
    total = 0
    for _ in range(size // 2 + 1):
        coroutine = visit(7)
        try:
            coroutine.send(None)
        except StopIteration as done:
            total += done.value
    return total


class Bag:
    def __init__(self):
        self.items = list(range(32))


def for_attribute(size):
    bag = Bag()
    total = 0
    for _ in range(size * 2):
        for item in bag.items:  # hot: for_attribute
            total += item
    return total


def dict_of_lists(size):
    tables = 0
    for k in range(size):
        table = {key: [key * v + k for v in range(8)] for key in range(8)}  # hot: dict_of_lists
        tables += len(table)
    return tables


def combine(a, b, scale=1, offset=0):
    return (a + b) * scale + offset


def multi_line_call(size):
    total = 0
    for i in range(size * 16):
        total += combine(  # hot: multi_line_call
            i,
            i + 1,
            scale=2,
            offset=-1,
        )
    return total


def make_adder(n):
    def add(x):
        return x + n  # hot: closure_per_call

    return add


def closure_per_call(size):
    total = 0
    for i in range(size * 32):
        total += make_adder(i)(1)
    return total


def unreached(size):
    return -size  # never run: the unreached breakpoint's line where the hot code has none


PROGRAMS = {name: globals()[name] for name in (
    "one_line", "while_header", "genexpr_in_if", "genexpr_in_sum", "recursive_generator",
    "recursive_coroutine", "for_attribute", "dict_of_lists", "multi_line_call", "closure_per_call")}

CONDITIONS = {
    "one_line": "x == -12345",
    "while_header": "i == -12345",
    "genexpr_in_if": "limit == -12345",  # the line runs in two frames: a local of both
    "genexpr_in_sum": "i == -12345",
    "recursive_generator": "depth == -12345",
    "recursive_coroutine": "depth == -12345",
    "for_attribute": "total == -12345",
    "dict_of_lists": "k == -12345",
    "multi_line_call": "i == -12345",
    "closure_per_call": "x == -12345",
}


def hot_line(name):
    """The line marked `# hot: NAME` in this file."""
    with open(__file__) as source:
        for number, text in enumerate(source, 1):
            if re.search(r"# hot: %s\b" % re.escape(name), text):
                return number
    raise LookupError("no line of %s is marked hot for %s" % (__file__, name))


def unreached_line():
    return unreached.__code__.co_firstlineno + 1
