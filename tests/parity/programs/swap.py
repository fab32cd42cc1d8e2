import swapmod


def main():
    breakpoint()
    print("hot", swapmod.hot(2))
    add = swapmod.make_adder(10)
    print("add", add(1))
    print("bump", swapmod.Box(1).bump())
    import swaplate

    print("late", swaplate.late(2))
    print("hot again", swapmod.hot(2))


main()
