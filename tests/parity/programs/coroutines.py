import asyncio


async def fetch(i):
    await asyncio.sleep(0)
    value = i * 10
    return value


async def gather_all(n):
    results = []
    for i in range(n):
        r = await fetch(i)
        results.append(r)
    return results


def main():
    breakpoint()
    out = asyncio.run(gather_all(3))
    print(out)


main()
