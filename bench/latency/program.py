"""The debuggee of bench/latency: one breakpoint, where it stays paused while the bench lists
and attaches to it."""
import time


def main():
    breakpoint()
    time.sleep(1)


if __name__ == "__main__":
    main()
