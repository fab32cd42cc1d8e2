"""Breakpoints on the lines of one-line functions, whose line also holds the function's start
(3.11: its RESUME), in a module no frame runs yet (3.11's swap mode can serve it)."""
import onelinemod


def main():
    breakpoint()
    total = 0
    for i in range(8):
        total += onelinemod.plus_one(i)
        total += onelinemod.Box(i).doubled()
    print("total", total)


main()
