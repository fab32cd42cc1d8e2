"""Forks twice, recording warnings: first with no thread of its own (CPython 3.12+ must not blame
the debugger's threads), then with one (it must still warn)."""
import os
import sys
import threading
import warnings


def fork_and_report(label):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    forks = [str(w.message) for w in caught if "fork" in str(w.message)]
    print(label, "warned: " + forks[0] if forks else "forked quietly", flush=True)


fork_and_report("alone")
release = threading.Event()
worker = threading.Thread(target=release.wait)
worker.start()
fork_and_report("with a thread")
release.set()
worker.join()
print("python", sys.version_info[:2], flush=True)
