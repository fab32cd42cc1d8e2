"""A job for `dpdb dap`'s thread names: a child process that gets its name after it connected,
as a launcher names its workers (the test says when, by files in the working directory)."""

import multiprocessing
import os
import time


def wait_for(name):
    # Bounded: a test that failed must not leave the child running for ever.
    for _ in range(600):
        if os.path.exists(name):
            return
        time.sleep(0.1)
    raise SystemExit("no %s within 60 s" % name)


def child():
    print("dap_rename child started", flush=True)
    wait_for("rename")
    multiprocessing.current_process().name = "renamed-worker"
    print("dap_rename child renamed", flush=True)
    wait_for("end")


if __name__ == "__main__":
    worker = multiprocessing.get_context("fork").Process(target=child, name="first-name")
    worker.start()
    worker.join()
