class Bag:
    def __init__(self, n):
        self.items = list(range(n))
        self.limit = 3


def total_of(bag):
    total = 0
    for item in bag.items:
        total += item
    return total


def skipping(bag):
    total = 0
    for item in bag.items:
        if item == 2:
            continue
        total += item
    return total


def nested(bags):
    count = 0
    for bag in bags:
        for item in bag.items:
            count += item > bag.limit
    return count


def guarded(bag):
    seen = []
    for item in bag.items:
        try:
            if item % 2:
                continue
            seen.append(10 // (item - 2))
        except ZeroDivisionError:
            seen.append("zero")
    return seen


def main():
    breakpoint()
    bag = Bag(6)
    print("total", total_of(bag))
    print("skipping", skipping(bag))
    print("nested", nested([Bag(3), Bag(5), Bag(2)]))
    print("guarded", guarded(bag))
    print("again", total_of(Bag(4)))
    print("done")


main()
