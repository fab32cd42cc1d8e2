"""Celery's time limits, held while the task's worker is paused."""

import sys


def in_pool_child():
    """Whether this process is a worker of Celery's prefork pool."""
    process = sys.modules.get("billiard.process")
    return "celery" in sys.modules and process is not None and (
        process.current_process().name != "MainProcess")
