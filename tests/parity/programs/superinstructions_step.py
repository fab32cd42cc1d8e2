"""pair() runs while a session steps (global events instrument it); after 'c' the engine must
put back the superinstructions 3.12 took out of it."""
from superpair import fused_pairs, pair


def main():
    created = fused_pairs(pair)
    breakpoint()
    total = pair(1)
    for _ in range(200):
        total += pair(2)
    after = fused_pairs(pair)
    breakpoint()
    print("total", total, created == after)


main()
