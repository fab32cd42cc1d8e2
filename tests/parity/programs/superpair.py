"""Lines that start with the second instruction of a superinstruction pair (3.12 fuses STORE_FAST
x at the end of one line with LOAD_FAST x at the start of the next)."""
import dis
import sys


def pair(a):
    x = a
    y = x
    z = y + 1
    return z


def never(n):
    if n < 0:
        print("never")
    return n


def run(times):
    total = 0
    for _ in range(times):
        total += pair(3)
    return total


def fused_pairs(function):
    """The superinstructions in the live bytecode of `function` (3.12 only, else None)."""
    if sys.version_info[:2] != (3, 12):
        return None
    return sum("__" in i.opname for i in dis.get_instructions(function, adaptive=True))


def tick():
    return None


def spaced(a):
    # A call between its lines lets the engine's pending call run between two of the DISABLEs:
    # the pair that ends a line and starts the next goes back only once that line's event is out.
    x = a
    tick()
    y = x
    w = y
    tick()
    return w
