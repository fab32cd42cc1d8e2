"""A job for `dpdb dap`'s thread names: a child process that gets its name after it connected,
as a launcher names its workers (the test says when, by files in the working directory)."""

import multiprocessing

from cues import wait_for


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
