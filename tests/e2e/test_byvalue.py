"""A global breakpoint by location arms in code whose file no module of the process holds: a
function unpickled by value (cloudpickle, as Ray, Dask and joblib send tasks) and source compiled
under its file's name."""

import os

import pytest

from conftest import PROMPT, finish, line_of, program, wait_until

pytest.importorskip("cloudpickle")


JOB = program(os.path.join("byvalue", "byvalue_job.py"))


def test_a_breakpoint_by_location_stops_in_a_function_that_came_by_value(dpdb):
    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", JOB, go)
    run.expect("driver ready")
    line = line_of(JOB, "the task's line")
    added = dpdb.run("dpdb", "break", "byvalue_job.py:%d" % line)
    assert added.returncode == 0, added.stderr
    open(go, "w").close()
    for mode in ("pickled", "compiled"):
        run.expect(r"byvalue_job.py\(%d\)task\(\)" % line)
        run.expect(PROMPT)
        run.sendline("p x, __name__")
        run.expect(r"\(21, '(\w+)'\)")
        # The worker never imported the driver's file: the function lives in no module of it.
        assert run.match.group(1) == ("__main__" if mode == "pickled" else "byvalue")
        run.sendline("!import sys; print(sorted(m for m in sys.modules if 'byvalue_job' in m))")
        run.expect(r"\[\]")
        run.sendline("c")
        run.expect("%s result 42" % mode)
    run.expect("driver done")
    finish(run)


def test_a_breakpoint_set_after_the_function_came_by_value_stops_in_it(dpdb):
    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", JOB, go, "early")
    run.expect("driver ready")
    line = line_of(JOB, "the task's line")
    wait_until(lambda: os.path.exists(go + ".held"), "the worker to unpickle the function")
    # No module of the worker names the file; the function made by value does.
    added = dpdb.run("dpdb", "break", "byvalue_job.py:%d" % line)
    assert added.returncode == 0, added.stderr
    assert "armed in 2 processes" in added.stdout, added.stdout
    open(go, "w").close()
    run.expect(r"byvalue_worker.py early .*, thread MainThread, at byvalue_job.py:%d in task\(\)"
               % line)
    run.expect(PROMPT)
    # At the prompt too, `b FILE:LINE` finds the file of code that came by value (no module
    # names it, and it is on no path the worker searches).
    returns = line_of(JOB, "the task's return")
    run.sendline("b byvalue_job.py:%d" % returns)
    run.expect(r"Breakpoint \d+ at \S+/byvalue/byvalue_job.py:%d" % returns)
    run.sendline("c")
    run.expect(r"byvalue_job.py\(%d\)task\(\)" % returns)
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("early result 42")
    run.expect("driver done")
    finish(run)


def test_a_function_pickled_while_a_breakpoint_is_armed_in_it_runs_where_dpdb_is_not(dpdb):
    # On 3.11 the armed function runs a patched copy of its code (swap mode), on 3.12+ a fast copy
    # (a conditional breakpoint); what cloudpickle sends is the user's code, which a process
    # without dpdb can run.
    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", JOB, go, "armed")
    run.expect("driver ready")
    line = line_of(JOB, "the task's line")
    added = dpdb.run("dpdb", "break", "byvalue_job.py:%d" % line, "--cond", "x == 21")
    assert added.returncode == 0, added.stderr
    open(go, "w").close()
    run.expect("bare result 42")
    run.expect(r"byvalue_job.py\(%d\)task\(\)" % line)
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("driver result 42")
    run.expect("driver done")
    finish(run)


def test_with_dpdb_cloudpickle_off_cloudpickle_3_1_code_names_no_file(dpdb):
    # From 3.1 on, cloudpickle pickles every function under the file name "<dynamic-code>"; in
    # the processes dpdb debugs, it keeps the real one (DPDB_CLOUDPICKLE=off: it does not).
    cloudpickle = pytest.importorskip("cloudpickle")
    if tuple(int(part) for part in cloudpickle.__version__.split(".")[:2]) < (3, 1):
        pytest.skip("cloudpickle %s keeps the file name itself" % cloudpickle.__version__)
    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", JOB, go, env={"DPDB_CLOUDPICKLE": "off"})
    run.expect("driver ready")
    line = line_of(JOB, "the task's line")
    added = dpdb.run("dpdb", "break", "byvalue_job.py:%d" % line)
    assert added.returncode == 0, added.stderr
    open(go, "w").close()
    run.expect("pickled result 42")  # nothing stopped it: its code names no file
    run.expect(r"byvalue_job.py\(%d\)task\(\)" % line)  # compiled under the file's name: stops
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("compiled result 42")
    run.expect("driver done")
    finish(run)
