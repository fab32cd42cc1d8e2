"""A call-heavy loop over functions of another module, running when breakpoints are set there."""
import time

import swapjob_work

if __name__ == "__main__":
    print("swapjob started", flush=True)
    end = time.monotonic() + 60
    i = 0
    while time.monotonic() < end:
        for _ in range(1000):
            swapjob_work.step(i)
            swapjob_work.make_scaler(3)(i)
            i += 1
        time.sleep(0.001)
