"""The pools of the standard library, of the `multiprocess` package (the standard library's, pickled by dill, as Hugging
Face datasets' map(num_proc=...) uses them) and of billiard (Celery's): under `dpdb run
--post-mortem`, a task that raises opens its session in the worker, at the raising line, with
its locals, and the caller gets the exception once it is continued; every worker is named in
`dpdb ls` (ForkPoolWorker-N) from its start, before it ran a task or opened a session. Real
packages from PyPI: dev/test runs these in build/venv-frameworks; elsewhere they skip (the
standard library's runs on every interpreter)."""

import os
import re

import pytest

from conftest import PROMPT, expect_all, finish, line_of, plain, program

POOL_PACKAGES = os.path.join(program("frameworks"), "pool_packages.py")


def workers_named_from_their_start(dpdb, run):
    """The idle workers' names in the listing; their pids."""
    started = expect_all(run, r"main pid \d+, workers \[(\d+), (\d+)\]\r\n")[0]
    workers = {int(started.group(1)), int(started.group(2))}

    def named(listing):
        names = {p["pid"]: p.get("process_name") for p in listing["processes"]}
        return all(names.get(worker) for worker in workers)

    listing = dpdb.wait_ls(named)
    names = sorted(p["process_name"] for p in listing["processes"] if p["pid"] in workers)
    assert names == ["ForkPoolWorker-1", "ForkPoolWorker-2"], listing
    return workers


@pytest.mark.parametrize("package, where, function", [
    ("multiprocess", "# line: lambda", "<lambda>"), ("billiard", "# line: billiard divide",
                                                      "ratio")])
def test_a_task_that_raises_opens_a_session_in_its_pool_worker(dpdb, package, where, function):
    pytest.importorskip(package)
    run = dpdb.spawn("dpdb", "run", "--post-mortem", POOL_PACKAGES, package)
    workers = workers_named_from_their_start(dpdb, run)
    run.sendline("")
    attached = expect_all(
        run, r"attached to session \d+: pid (\d+) (ForkPoolWorker-\d)[^\r\n]*, at "
        r"pool_packages\.py:%d in %s\(\)" % (line_of(POOL_PACKAGES, where), re.escape(function)),
        r"%s: post-mortem of ZeroDivisionError in the worker that ran %s \(the caller gets the "
        r"exception once you continue\)" % ("pool" if package == "multiprocess" else package,
                                            re.escape(function)))[0]
    assert int(attached.group(1)) in workers
    run.expect(PROMPT)
    run.sendline("p example, __import__('os').getpid() in (%d, %d)" % tuple(workers))
    run.expect(re.escape("({'total': 10, 'rows': 0}, True)"))
    run.expect(PROMPT)
    run.sendline("c")
    for line in ("the caller got ZeroDivisionError", "the pool still works: [2]", "main done"):
        run.expect_exact(line)
    finish(run, 0)
    assert plain(run.logfile_read.getvalue()).count("post-mortem of") == 1


def test_the_standard_librarys_idle_pool_workers_are_named(dpdb):
    run = dpdb.spawn("dpdb", "run", POOL_PACKAGES, "multiprocessing")
    workers_named_from_their_start(dpdb, run)
    run.sendline("")
    for line in ("the caller got ZeroDivisionError", "the pool still works: [2]", "main done"):
        run.expect_exact(line)
    finish(run, 0)
