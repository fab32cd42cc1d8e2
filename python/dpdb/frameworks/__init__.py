"""The framework integrations, one module per framework or family: Ray (ray), debugpy
(debugpy), pytest (pytest_plugin), gevent (greenlets), the process pools' workers
(pool_workers), code that came by value through cloudpickle, joblib or dill (pickled_code),
supervisors kept content while a worker is paused (supervisors, with celery_limits, dask_worker
and torch_distributed), and post-mortem where a framework catches the exception
(caught_exceptions). The core reaches them through this registry only; they import the core's
leaves (_agent, _on_import, _switches...) and each other, never a stage of the core."""

from dpdb.frameworks import (caught_exceptions, debugpy, greenlets, pickled_code, pool_workers,
                             ray, supervisors)

# What goes in at a process's start (_bootstrap).


def at_start(set_trace, set_trace_at, tell_the_hub):
    """set_trace(), set_trace_at(frame, header): dpdb's stops; tell_the_hub(): the process's
    name and tags to the hub, if they changed."""
    pool_workers.name_from_start(tell_the_hub)
    pickled_code.keep_file_names()
    ray.keep_breakpoints(set_trace)
    debugpy.keep_breakpoints(set_trace_at)


# Who the process is and what it runs (_identity, _debugger).
tags = ray.tags
task_name = ray.task_name
thread_label = greenlets.label

# Threads and greenlets as `dpdb stacks` shows them (_control).
os_thread_ident = greenlets.os_thread_ident
threads_by_os_ident = greenlets.threads_by_os_ident
greenlets_now = greenlets.greenlets

# A paused worker's supervisors (_debugger).
kept_while_paused = supervisors.kept_while_paused

# Post-mortem where a framework catches the exception (_exceptions).
install_caught_exceptions = caught_exceptions.install
caught_exception_seen = caught_exceptions.seen
