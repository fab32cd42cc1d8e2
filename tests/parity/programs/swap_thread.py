import threading

import swapmod

started = threading.Event()
go = threading.Event()


def caller(out):
    # Already looping over calls of the function when its breakpoint is set (calls that do not
    # reach its line, so that only the main thread stops until it continues).
    started.set()
    while not go.is_set():
        out.append(swapmod.hot(0))
    out.append(swapmod.hot(2))


def main():
    out = []
    t = threading.Thread(target=caller, args=(out,))
    t.start()
    started.wait()
    breakpoint()
    go.set()
    t.join()
    print("worker", out[-1])


main()
