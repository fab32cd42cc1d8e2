"""Pool workers named from their start: multiprocessing (and its forks `multiprocess` and
billiard) names a worker (ForkPoolWorker-2, SpawnPoolWorker-1) in the worker's bootstrap, after
the process has told the hub who it is; it runs the pool's after-fork callbacks right after
(every start method does), and one of them tells the hub the name. Otherwise an idle worker
would stay unnamed in `dpdb ls` until the control thread next looks."""

from dpdb import _on_import

_UTIL_MODULES = ("multiprocessing.util", "multiprocess.util", "billiard.util")


class _Registration:
    """What the pool's registry keeps a weak reference to (it drops callbacks whose object
    died): this module's one instance lives as long as the process."""


_registration = _Registration()


def name_from_start(tell_the_hub):
    """tell_the_hub(): the process's name and tags to the hub, if they changed."""
    for name in _UTIL_MODULES:
        _on_import.when_imported(
            name, lambda util: util.register_after_fork(_registration, lambda _: tell_the_hub()))
