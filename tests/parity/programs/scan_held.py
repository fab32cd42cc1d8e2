import os

import swapmod

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    # Compiled before the breakpoint exists and held, not imported: no function runs it yet.
    path = os.path.join(HERE, "scanheld.py")
    with open(path) as source:
        code = compile(source.read(), path, "exec")
    breakpoint()
    exec(code, {"__name__": "scanheld"})
    print("hot", swapmod.hot(2))


main()
