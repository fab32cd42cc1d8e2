"""A parent and a worker process (multiprocessing's spawn: a new interpreter); the worker stops at
a breakpoint() with its result computed, and the parent prints what it returned."""

import multiprocessing


def square(n):
    total = n * n
    breakpoint()
    return total


if __name__ == "__main__":
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print("results", pool.map(square, [7]))
