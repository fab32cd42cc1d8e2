import threading

ready = threading.Event()
go = threading.Event()


def started_early():
    ready.set()
    go.wait()
    for i in range(2):
        x = i * 2
    return x


def spinning():
    n = 0
    while not go.is_set():
        n += 1
    for i in range(2):
        hit = i
    return hit


def main():
    early = threading.Thread(target=started_early)
    spin = threading.Thread(target=spinning)
    early.start()
    spin.start()
    ready.wait()
    breakpoint()
    go.set()
    early.join()
    spin.join()
    print("joined")


main()
