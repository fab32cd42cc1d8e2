"""Two tasks in joblib's loky workers, one of which raises; the caller catches what joblib
raises again in it."""
import os

import joblib


def share(rows):
    total = sum(range(rows))
    return total // (rows - 5)  # line: divide


if __name__ == "__main__":
    print("main pid", os.getpid(), flush=True)
    try:
        joblib.Parallel(n_jobs=2)(joblib.delayed(share)(rows) for rows in (4, 5))
    except ZeroDivisionError:
        print("the caller got ZeroDivisionError", flush=True)
