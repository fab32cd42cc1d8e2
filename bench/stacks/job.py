"""The job measured by bench/stacks: a parent with N Python children, each with two threads
whose stacks are a few frames deep, all running (sleeping in short naps) until killed."""
import subprocess
import sys
import threading
import time


def nap_deeper(depth):
    if depth:
        return nap_deeper(depth - 1)
    while True:
        time.sleep(0.05)


def child():
    threading.Thread(target=nap_deeper, args=(3,), name="helper", daemon=True).start()
    nap_deeper(5)


if __name__ == "__main__":
    if sys.argv[1] == "child":
        child()
    children = [subprocess.Popen([sys.executable, __file__, "child"])
                for _ in range(int(sys.argv[1]))]
    print("job up", flush=True)
    for process in children:
        process.wait()
