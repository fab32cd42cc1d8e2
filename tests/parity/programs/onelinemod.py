def plus_one(x): return x + 1  # noqa: E704 (the kind tested: a one-line def)


class Box:
    def __init__(self, v): self.v = v  # noqa: E704

    def doubled(self): return self.v * 2  # noqa: E704
