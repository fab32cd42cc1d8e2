"""Requests through three stages in four processes: the front end (a thread named "frontend" of
the main process), two parsers (one forked, one spawned) and a store (a subprocess). It waits for
the file named by argv[1] before the first request, so that logpoints can go in while every
process runs; argv[2] requests. Prints each request's result and the total."""

import multiprocessing
import os
import subprocess
import sys
import threading
import time

import pipeline_stages

STORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pipeline_store.py")


def main():
    go, count = sys.argv[1], int(sys.argv[2])
    inboxes, results, parsers = [], multiprocessing.get_context("spawn").Queue(), []
    for index, method in enumerate(("fork", "spawn")):
        context = multiprocessing.get_context(method)
        inbox = context.Queue()
        parser = context.Process(target=pipeline_stages.serve, args=(inbox, results),
                                 name="parser-%d" % index)
        parser.start()
        inboxes.append(inbox)
        parsers.append(parser)
    store = subprocess.Popen([sys.executable, STORE], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, DPDB_TAGS="role=store"))
    for inbox in inboxes:  # every parser is up before the test goes on
        inbox.put(("warm-up", []))
        results.get()
    store.stdout.readline()  # and the store runs its code
    print("pipeline ready", os.getpid(), *(p.pid for p in parsers), store.pid, flush=True)
    while not os.path.exists(go):
        time.sleep(0.02)
    total = 0

    def frontend():
        nonlocal total
        for i in range(count):
            request = "req-%03d" % i
            rows = pipeline_stages.receive(request, i)
            inboxes[i % 2].put((request, rows))
            _, parsed = results.get()
            store.stdin.write("%s %d\n" % (request, parsed))
            store.stdin.flush()
            stored = int(store.stdout.readline().split()[1])
            print("%s -> %d" % (request, stored), flush=True)
            total += stored

    thread = threading.Thread(target=frontend, name="frontend")
    thread.start()
    thread.join()
    for inbox in inboxes:
        inbox.put(None)
    for parser in parsers:
        parser.join()
    store.stdin.close()
    store.wait()
    print("pipeline done total=%d" % total, flush=True)


if __name__ == "__main__":
    main()
