"""A program started without dpdb whose second thread spins in Python, holding the GIL, in
`spin`, while the main thread sleeps. Says "ready" with the spinner's ident once it started."""

import threading
import time


def spin():
    while True:
        pass  # the spinner spins here


spinner = threading.Thread(target=spin, name="spinner", daemon=True)
spinner.start()
print("ready", spinner.ident, flush=True)
time.sleep(600)
