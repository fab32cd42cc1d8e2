"""A Dask job on a LocalCluster of one worker process under its nanny, with a short worker-ttl:
a task that stops at breakpoint() (tasks run in the worker's thread pool), an `async def` task
that stops at breakpoint() on the worker's event loop (which beats the worker's heartbeat), a
task with a line for a global breakpoint, and an `async def` task that blocks the loop with no
debugger involved, once. Dask sends these functions by value: the worker never imports this file.
argv: the mode (`all`, or `async` for the async task alone) and a file whose appearance says go on."""
import asyncio
import os
import sys
import time

import dask
from distributed import Client, LocalCluster

# The scheduler restarts a worker it has not heard from for max(worker-ttl, 10 heartbeat
# intervals): 5 s for a cluster of one.
WORKER_TTL = "1s"


def square(x):
    y = x * x
    breakpoint()  # the task's breakpoint
    return y


async def async_square(x):
    y = x * x
    breakpoint()  # the async task's breakpoint
    await asyncio.sleep(0)
    return y


def halve(x):
    half = x / 2  # the line of a global breakpoint
    return half


async def block_loop_once(marker, seconds):
    # The first run blocks the worker's event loop past the worker-ttl; the run after the
    # worker's restart returns at once.
    if os.path.exists(marker):
        return "run again"
    open(marker, "w").close()
    time.sleep(seconds)
    return "ran through"


def wait_for(path):
    for _ in range(1200):
        if os.path.exists(path):
            return
        time.sleep(0.05)


def worker_addresses(client):
    return sorted(client.scheduler_info()["workers"])


if __name__ == "__main__":
    mode, go = sys.argv[1:3]
    with dask.config.set({"distributed.scheduler.worker-ttl": WORKER_TTL}), \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster, Client(cluster) as client:
        before = worker_addresses(client)
        print("dask ready", flush=True)
        if mode == "all":
            print("task", client.submit(square, 7).result(), flush=True)
        print("async task", client.submit(async_square, 6).result(), flush=True)
        print("same worker", worker_addresses(client) == before, flush=True)
        if mode == "all":
            print("waiting for the global breakpoint", flush=True)
            wait_for(go)
            print("halved", client.submit(halve, 10).result(), flush=True)
            blocked = client.submit(block_loop_once, go + ".blocked", 30, pure=False)
            print("blocked loop", blocked.result(), flush=True)
            print("same worker", worker_addresses(client) == before, flush=True)
    print("dask done", flush=True)
