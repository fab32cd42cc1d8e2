"""A condition with a side effect, as dpdb pause's: true at its third evaluation only."""
ticks = 0


def tick():
    global ticks
    ticks += 1
    return ticks == 3
