def spin(n):
    total = 0
    for i in range(n):
        total += i
    return total


def loop_first(n):
    while n > 0:
        n -= 1
    return n


def main():
    breakpoint()
    spin(3)
    spin(2)
    loop_first(2)
    spin(4)
    print("done")


main()
