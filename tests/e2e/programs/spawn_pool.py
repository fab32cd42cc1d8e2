import multiprocessing as mp
import os


def work(x):
    y = x * 2
    breakpoint()
    return y + 1


if __name__ == "__main__":
    print("main pid %d" % os.getpid(), flush=True)
    with mp.get_context("spawn").Pool(2) as pool:
        print("results %s" % sorted(pool.map(work, [1, 2], chunksize=1)), flush=True)
    print("main done", flush=True)
