import types

import swapmod


def main():
    breakpoint()
    print("hot", swapmod.hot(2))
    # Made from hot's __code__ while it may be swapped (3.11 native): the patched copy.
    h2 = types.FunctionType(swapmod.hot.__code__.replace(co_name="h2"), vars(swapmod))
    print("h2", h2(2))


main()
