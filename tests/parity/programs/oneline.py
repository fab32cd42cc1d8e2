def spin(n):
    total = 0
    for i in range(n): total += i
    while n > 0: n -= 1
    return total


def main():
    breakpoint()
    s = spin(4)
    print(s)


main()
