"""Lines that start with the second instruction of a superinstruction pair (3.12 fuses STORE_FAST
x at the end of one line with LOAD_FAST x at the start of the next). The engine puts such pairs
back after its events were taken out; a breakpoint set later, a step and a jump must still see
every line."""
import dis
import sys
import threading


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
    if sys.version_info[:2] != (3, 12):
        return None
    return sum("__" in i.opname for i in dis.get_instructions(function, adaptive=True))


def main():
    created = fused_pairs(pair)
    breakpoint()
    never(1)
    # In a thread while the main thread waits in join(): any thread serves the restoring.
    worker = threading.Thread(target=run, args=(300,))
    worker.start()
    worker.join()
    fused = fused_pairs(pair)
    breakpoint()
    print("pair", pair(5))
    print("run", run(3))


main()
