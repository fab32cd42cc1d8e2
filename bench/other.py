"""A file that holds a breakpoint but whose code never runs during the benchmark."""


def never_called():
    value = 1
    return value


OTHER_LINE = 5
