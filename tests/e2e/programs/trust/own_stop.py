"""The program's own breakpoint(), reached once the test has armed a conditional global breakpoint
in the function it calls next; with the argument "thread", in a thread of its own."""
import sys
import threading

from wait_go import wait_for


def add_one(x):
    y = x + 1  # conditional breakpoint here
    return y


def main():
    wait_for(sys.argv[1])
    breakpoint()  # the program's own stop
    print("add_one gave %d" % add_one(1), flush=True)


print("waiting", flush=True)
if sys.argv[2:] == ["thread"]:
    worker = threading.Thread(target=main, name="worker")
    worker.start()
    worker.join()
else:
    main()
print("own stop done", flush=True)
