def late(x):
    z = x * 3
    return z
