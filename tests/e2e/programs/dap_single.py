"""One process for comparing `dpdb dap` with debugpy on the same flow: work() is called again and
again; its loop gives a step something to step through."""

import time


def work(n, items):
    total = n * 2  # dap: first line of work
    for i in range(200):
        total += items[i % len(items)]
    return total


def main(rounds):
    print("dap_single running", flush=True)  # bench/dap: the program runs, as under debugpy
    items = list(range(500))
    for n in range(rounds):
        work(n, items)
        time.sleep(0.01)


if __name__ == "__main__":
    main(60000)  # bounded: ten minutes at most
