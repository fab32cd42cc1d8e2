"""A job three processes deep: the program, a spawned worker, and a Python subprocess of it,
whose loop is where a global breakpoint is set while the whole tree is already running."""
import multiprocessing as mp
import subprocess
import sys
import time


def leaf_work(i):
    doubled = i * 2  # global breakpoint here
    return doubled


def leaf():
    for i in range(600):
        leaf_work(i)
        time.sleep(0.05)


def middle():
    subprocess.run([sys.executable, __file__, "leaf"], check=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["leaf"]:
        leaf()
        sys.exit(0)
    worker = mp.get_context("spawn").Process(target=middle, name="middle")
    worker.start()
    worker.join()
    print("tree done", worker.exitcode, flush=True)
