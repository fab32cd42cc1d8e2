"""The engine puts superinstruction pairs back after its events were taken out of superpair's
code; a breakpoint set later, a step and a jump must still see every line."""
import threading

from superpair import fused_pairs, never, pair, run, spaced


def main():
    created = fused_pairs(pair), fused_pairs(spaced)
    breakpoint()
    never(1)
    # In a thread while the main thread waits in join(): any thread serves the restoring.
    worker = threading.Thread(target=run, args=(300,))
    worker.start()
    worker.join()
    spaced(1)
    spaced(2)
    fused = fused_pairs(pair), fused_pairs(spaced)
    breakpoint()
    print("pair", pair(5))
    print("run", run(3))


main()
