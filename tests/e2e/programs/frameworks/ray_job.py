"""A Ray job on the local cluster of ray.init(): a task, an actor method and an async actor's
method that stop at breakpoint(), then a task with a line for a global breakpoint. Ray sends these functions to its
workers by value: no worker imports this file. argv: a file whose appearance says go on."""
import os
import sys
import time

import ray


@ray.remote
def square(x):
    y = x * x
    breakpoint()  # the task's breakpoint
    return y


@ray.remote
def halve(x):
    half = x / 2  # the line of a global breakpoint
    return half


@ray.remote
class Counter:
    def __init__(self):
        self.n = 0

    def incr(self):
        self.n += 1
        breakpoint()  # the actor's breakpoint
        return self.n


@ray.remote
class AsyncCounter:
    async def incr(self, by):
        total = by + 1
        breakpoint()  # the async actor's breakpoint
        return total


if __name__ == "__main__":
    ray.init(num_cpus=1, include_dashboard=False)
    print("task", ray.get(square.remote(7)), flush=True)
    counter = Counter.remote()
    print("actor", ray.get(counter.incr.remote()), flush=True)
    print("async actor", ray.get(AsyncCounter.remote().incr.remote(4)), flush=True)
    print("waiting for the global breakpoint", flush=True)
    for _ in range(600):
        if os.path.exists(sys.argv[1]):
            break
        time.sleep(0.05)
    print("halved", ray.get(halve.remote(10)), flush=True)
    ray.shutdown()
    print("ray done", flush=True)
