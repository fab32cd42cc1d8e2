def bodies(n):
    return [([float(i), 2.0 * i, 0.5 * i], [0.0, 0.0, 0.0], 1.0 + i) for i in range(n)]


def pairs_of(items):
    out = []
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            out.append((items[i], items[j]))
    return out


def single(n):
    total = skipped = 0
    for i in range(n):
        if i % 3 == 1:
            skipped += 1
            continue
        total += i
    return total, skipped


def multi(pairs):
    dist = 0.0
    for (([x1, y1, z1], v1, m1),
         ([x2, y2, z2], v2, m2)) in pairs:
        dx = x1 - x2
        dist += dx * dx * m1 * m2
    return dist


def caught(n):
    log = []
    for k in range(n):
        try:
            if k == 2:
                raise ValueError(k)
            log.append(k)
        except ValueError:
            log.append(-k)
    return log


def countdown(n):
    steps = 0
    while n > 0:
        n -= 1
        if n == 2:
            continue
        steps += 1
    return steps


def main():
    breakpoint()
    print("single", single(7))
    print("multi", multi(pairs_of(bodies(4))))
    print("caught", caught(5))
    print("countdown", countdown(5))
    print("late", len(bodies(3)))


main()
