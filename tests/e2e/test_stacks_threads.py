"""`dpdb stacks` of a threaded program lists the program's threads, each by its name, and none of
dpdb's own (the control thread that answers, or any other dpdb-* thread)."""

import json

from conftest import program


def test_stacks_list_the_programs_threads_and_no_thread_of_dpdbs(dpdb):
    run = dpdb.spawn("dpdb", "run", program("pausable.py"))
    run.expect(r"pausable up (\d+)")
    pid = int(run.match.group(1))
    done = dpdb.run("dpdb", "stacks", str(pid))
    assert done.returncode == 0, done.stderr
    assert "dpdb-" not in done.stdout and "Thread ?" not in done.stdout, done.stdout
    [entry] = json.loads(dpdb.run("dpdb", "stacks", "--json", str(pid)).stdout)
    names = sorted(t["name"] for t in entry["stacks"]["threads"])
    assert names == ["MainThread", "cruncher", "napper", "waiter"], entry
    run.terminate(force=True)
