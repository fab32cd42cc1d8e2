def compute(n):
    result = n * 10  # global breakpoint here
    return result
