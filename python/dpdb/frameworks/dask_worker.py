"""A Dask worker's heartbeat, kept while the worker is paused.

Dask's scheduler restarts (through its nanny, which kills it) a worker whose heartbeat it has not
heard for `distributed.scheduler.worker-ttl`. The worker beats it from its event loop, which runs
in the process's main thread while tasks run in a pool of threads: a task paused at a prompt
leaves the loop beating, but a pause of the loop itself (an `async def` task, which Dask runs on
the loop, a breakpoint in the worker's own code, `dpdb pause PID`) silences it, and the worker
was restarted under the user, the task sent again.

So while the process is paused, each beat looks whether the worker's loop still runs (a callback
put on it since the last beat has run); where it does not, the heartbeat is sent for it, over a
connection of its own from the paused-time thread. The worker's state does not change while its
loop stands still, so what the heartbeat reports (the worker's metrics, its executing tasks) is
read as the loop would. Once the loop runs, its own heartbeat takes over and worker-ttl counts from
the last beat.
"""

import asyncio
import sys
import threading
import time


class Dask:
    """The strategy (see supervisors): applies in a process with a running Dask Worker."""

    name = "dask"

    def __init__(self):
        self._workers = []
        self._probes = {}  # a worker's event loop -> the Event its last probe sets when it runs

    def applies(self):
        module = sys.modules.get("distributed.worker")
        if module is None:
            return False
        self._workers = [worker for worker in list(module.Worker._instances)
                         if worker.status.value in ("running", "paused")]
        return bool(self._workers)

    def interval(self):
        # As often as the scheduler asks the worker to beat; worker-ttl is ten times that or more.
        return min(worker.periodic_callbacks["heartbeat"].callback_time
                   for worker in self._workers) / 1000.0

    def describe(self):
        return ("dask: keeping the worker's heartbeat to the scheduler while it is paused (its "
                "worker-ttl counts again once it runs)")

    def beat(self):
        for worker in self._workers:
            if not self._loop_runs(worker.loop.asyncio_loop):
                asyncio.run(_heartbeat(worker))

    def resume(self):
        pass

    def _loop_runs(self, loop):
        """False when the probe put on `loop` at the last beat has not run since."""
        if loop.is_closed():
            return True  # the worker ended: nothing to beat for
        probe = self._probes.get(loop)
        if probe is not None and not probe.is_set():
            return False
        probe = self._probes[loop] = threading.Event()
        loop.call_soon_threadsafe(probe.set)
        return True


async def _heartbeat(worker):
    """What Worker.heartbeat sends, from this thread's own loop and connection."""
    from distributed.core import rpc

    start = time.time()
    tasks = worker.state.tasks
    # In Worker.heartbeat's order: get_metrics hands the spans' digests to their extension,
    # whose heartbeat() takes them (left there, the worker's next get_metrics fails).
    metrics = await worker.get_metrics()
    extensions = {name: extension.heartbeat() for name, extension in worker.extensions.items()
                  if hasattr(extension, "heartbeat")}
    async with rpc(worker.scheduler.address, connection_args=worker.connection_args) as scheduler:
        await scheduler.heartbeat_worker(
            address=worker.contact_address, now=start, metrics=metrics,
            executing={key: start - tasks[key].start_time
                       for key in worker.active_keys if key in tasks},
            extensions=extensions)
