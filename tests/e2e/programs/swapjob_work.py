"""A module the job imports before any breakpoint exists (3.11: swap mode patches its functions)."""


def step(i):
    value = i * 2  # the swapped line
    return value


def make_scaler(k):
    def scale(i):
        scaled = i * k  # the closure's line
        return scaled

    return scale
