"""Files a test creates in a program's working directory to say when the program goes on."""

import os
import time


def wait_for(name):
    # Bounded: a test that failed must not leave the program running for ever.
    for _ in range(600):
        if os.path.exists(name):
            return
        time.sleep(0.1)
    raise SystemExit("no %s within 60 s" % name)
