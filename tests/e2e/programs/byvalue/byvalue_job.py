"""A driver that sends its function to worker processes by value, as Ray, Dask and joblib do:
pickled with cloudpickle (the worker never imports this file), and as source compiled under this
file's name. argv: a file whose appearance says go; with `early`, one worker that unpickles the
function first and waits for that file before it calls it; with `armed`, the function pickled
once its breakpoint is armed, sent to a worker that has no dpdb, then called here."""
import os
import subprocess
import sys
import time

import cloudpickle


def task(x):
    doubled = x * 2  # the task's line
    return doubled  # the task's return


def run_worker(mode, payload, *args, env=None):
    # The worker lives in the folder above: this file is on no path the worker searches.
    worker = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "byvalue_worker.py")
    done = subprocess.run([sys.executable, worker, mode, *args], input=payload,
                          stdout=subprocess.PIPE, env=env)
    sys.stdout.write(done.stdout.decode())
    sys.stdout.flush()


def wait_for(path):
    for _ in range(600):
        if os.path.exists(path):
            return
        time.sleep(0.05)


if __name__ == "__main__":
    go = sys.argv[1]
    # Pickled before the breakpoint is set: on 3.11 the engine's swap mode gives an armed
    # function a patched copy of its code (3.12+: a fast copy, for a conditional breakpoint),
    # which cloudpickle would send (see docs/frameworks.md).
    pickled = cloudpickle.dumps(task)
    print("driver ready", flush=True)
    if sys.argv[2:] == ["early"]:
        run_worker("early", pickled, go)
    elif sys.argv[2:] == ["armed"]:
        wait_for(go)
        plain_code = task.__code__.co_code
        if sys.version_info >= (3, 11):  # swap mode or a fast copy: `task` gets its copy soon
            for _ in range(100):
                if task.__code__.co_code != plain_code:
                    break
                time.sleep(0.05)
        # A worker started with an empty environment carries no agent.
        run_worker("bare", cloudpickle.dumps(task), env={})
        print("driver result", task(21), flush=True)
    else:
        wait_for(go)
        run_worker("pickled", pickled)
        run_worker("compiled", os.path.abspath(__file__).encode())
    print("driver done", flush=True)
