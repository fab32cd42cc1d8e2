def step(n):
    value = n * 3  # work breakpoint here
    return value
