def work(n):
    total = 0
    for i in range(n):
        total += i
    return total


def main():
    breakpoint()
    work(500)
    work(2)
    print("done")


main()
