"""Two threads stop at a breakpoint() each, while a third keeps working: it counts the lines that
arrive through a FIFO (argv[1]) and reports each one."""

import sys
import threading

counter = 0


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def count(path):
    global counter
    with open(path) as fifo:
        for line in fifo:
            counter += 1
            say("tick %d %s" % (counter, line.strip()))
    say("counter finished at %d" % counter)


def work(name):
    value = name.upper()
    breakpoint()
    say("%s done with %s" % (name, value))


if __name__ == "__main__":
    counting = threading.Thread(target=count, args=(sys.argv[1],), name="counter")
    counting.start()
    workers = [threading.Thread(target=work, args=(name,), name="worker-" + name)
               for name in ("a", "b")]
    for worker in workers:
        worker.start()
    for thread in workers + [counting]:
        thread.join()
    say("main done")
