import threading

ready = threading.Event()
go = threading.Event()


def hot(k):
    acc = 0
    for i in range(k):
        acc += i
    return acc


def worker(out):
    ready.set()
    go.wait()
    out.append(hot(3))


def main():
    out = []
    t = threading.Thread(target=worker, args=(out,))
    t.start()
    ready.wait()
    breakpoint()
    go.set()
    t.join()
    print("worker", out)


main()
