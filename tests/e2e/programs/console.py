"""One stop, with a few names to complete and a long list to pretty-print."""

import sys


def main():
    some_variable = 42
    some_value = "text"
    wide = list(range(1000, 1030))  # 180 characters
    medium = list(range(1000, 1012))  # 72 characters
    breakpoint()
    return some_variable, some_value, wide, medium


if __name__ == "__main__":
    main()
    sys.stdout.write("program done\n")
