"""The debuggee of bench/stop_latency: stops at once, then loops over the line the bench sets a
breakpoint on (STOP_LINE), with a little work between two stops."""
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main(rounds):
    breakpoint()
    total = 0
    for i in range(rounds):
        total += fib(12)  # STOP_LINE
    print("program done", total, flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
