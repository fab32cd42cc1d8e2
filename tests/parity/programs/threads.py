import threading


def work(tag, n):
    breakpoint()
    acc = 0
    for i in range(n):
        acc += i
    return tag, acc


def main():
    results = []
    for tag in ("a", "b"):
        t = threading.Thread(target=lambda tag=tag: results.append(work(tag, 3)))
        t.start()
        t.join()
    print(sorted(results))


main()
