"""pair() runs while a session steps (global events instrument it); after 'c' the engine must
put back the superinstructions 3.12 took out of it."""
import dis
import sys


def pair(a):
    x = a
    y = x
    z = y + 1
    return z


def fused_pairs(function):
    if sys.version_info[:2] != (3, 12):
        return None
    return sum("__" in i.opname for i in dis.get_instructions(function, adaptive=True))


def main():
    created = fused_pairs(pair)
    breakpoint()
    total = pair(1)
    for _ in range(200):
        total += pair(2)
    after = fused_pairs(pair)
    breakpoint()
    print("total", total, created == after)


main()
