"""A Celery task with time limits that stops at a breakpoint, and one that raises. The broker is kombu's filesystem
transport in the folder CELERY_QUEUE names: no server to start, and a prefork pool works with it
as with any broker (the pool does not care where tasks come from)."""
import os

import celery
from celery import signals

queue = os.environ["CELERY_QUEUE"]
os.makedirs(queue, exist_ok=True)
app = celery.Celery("tasks", broker="filesystem://", broker_transport_options={
    "data_folder_in": queue, "data_folder_out": queue, "polling_interval": 0.1,
    # kombu's broadcast (pidbox) exchanges, which it would keep in ./control otherwise.
    "control_folder": os.path.join(queue, "control")})
app.conf.update(task_time_limit=float(os.environ.get("TASK_TIME_LIMIT", "2")),
                task_soft_time_limit=float(os.environ.get("TASK_TIME_LIMIT", "2")) / 2,
                worker_hijack_root_logger=False, worker_redirect_stdouts=False)


@signals.worker_ready.connect
def say_ready(**kwargs):
    print("worker ready, main pid", os.getpid(), flush=True)


@app.task
def score(rows):
    total = sum(range(rows))
    breakpoint()
    return total


@app.task
def ratio(rows):
    total = sum(range(rows))
    return total // (rows - rows)  # line: divide
