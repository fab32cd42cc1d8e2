"""A job for `dpdb dap`: this process starts a child (subprocess), whose multiprocessing worker
(a grandchild) calls work() again and again and writes how far it got to a file."""

import multiprocessing
import subprocess
import sys
import time


def work(n, items):
    total = n * 2  # dap: first line of work
    total += len(items)  # dap: second line of work
    return total


def grandchild(beat_file):
    items = list(range(500))
    table = {"name": "dpdb", "depth": 2}
    for n in range(3000):  # bounded: ten minutes at most
        result = work(n, items)  # dap: call of work
        with open(beat_file, "w") as beat:
            beat.write("%d %d %s\n" % (n, result, table["name"]))
        time.sleep(0.2)


def child(beat_file):
    worker = multiprocessing.get_context("fork").Process(target=grandchild, args=(beat_file,))
    worker.start()
    worker.join()


if __name__ == "__main__":
    if sys.argv[1] == "child":
        child(sys.argv[2])
    else:
        subprocess.run([sys.executable, __file__, "child", sys.argv[1]], check=True)
