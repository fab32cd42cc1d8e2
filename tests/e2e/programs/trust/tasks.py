async def run(n):
    total = n + 100  # task breakpoint here
    return total
