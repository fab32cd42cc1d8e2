def work(n):
    return n * 2


def loop():
    total = 0
    for n in range(5):
        total += work(n)
    return total


breakpoint()
print(loop())
