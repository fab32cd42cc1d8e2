import gc

import swapmod


def main():
    # What gc.freeze() moved out of the collector's view is out of a heap scan's view too.
    gc.freeze()
    breakpoint()
    print("hot", swapmod.hot(2))


main()
