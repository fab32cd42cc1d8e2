limit = 100
shadow = -1


def hot(n):
    total = 0
    for i in range(n):
        sq = i * i
        total += sq
    return total


def closure(n):
    limit = n // 2

    def inner(k):
        seen = k + limit
        return seen

    return [inner(k) for k in range(n)]


def cell_arg(step):
    def read():
        return step

    acc = 0
    for j in range(4):
        acc += step * j
    return acc + read()


def late(n):
    if n > 2:
        shadow = n
    out = n
    return out


def main():
    breakpoint()
    print("hot", hot(6), hot(4))
    print("closure", closure(4))
    print("cell_arg", cell_arg(3))
    print("late", [late(n) for n in range(5)])


main()
count = 0
for m in range(6):
    count += m
print("count", count)
import sys  # noqa: E402

print("ticks", getattr(sys.modules.get("ticker"), "ticks", None))
