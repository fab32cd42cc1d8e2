import time

import swapmod


def spin():
    return None


def main():
    g = swapmod.gen(3)
    first = next(g)
    breakpoint()
    print("gen", first, list(g))
    # Enough calls, for long enough, for a rescan to find the generator finished.
    start = time.time()
    while time.time() - start < 0.8:
        for _ in range(5000):
            spin()
    breakpoint()
    print("hot", swapmod.hot(2))


main()
