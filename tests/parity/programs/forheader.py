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


def advance(dt, n, bodies, pairs):
    # nbody's: the jump at line 57's start is as wide as GET_ITER and FOR_ITER together.
    for i in range(n):
        for (([x1, y1, z1], v1, m1),
             ([x2, y2, z2], v2, m2)) in pairs:
            dx = x1 - x2
            dy = y1 - y2
            dz = z1 - z2
            mag = dt * ((dx * dx + dy * dy + dz * dz) ** (-1.5))
            b1m = m1 * mag
            b2m = m2 * mag
            v1[0] -= dx * b2m
            v1[1] -= dy * b2m
            v1[2] -= dz * b2m
            v2[0] += dx * b1m
            v2[1] += dy * b1m
            v2[2] += dz * b1m
        for (r, [vx, vy, vz], m) in bodies:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz


def main():
    breakpoint()
    print("single", single(7))
    print("multi", multi(pairs_of(bodies(4))))
    print("caught", caught(5))
    print("countdown", countdown(5))
    print("late", len(bodies(3)))
    system = bodies(3)
    advance(0.01, 2, system, pairs_of(system))
    print("advanced", [round(c, 6) for b in system for c in b[0]])


main()
