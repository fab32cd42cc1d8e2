"""A process that execs another program stays in `dpdb ps`, with its new command, and its Python
children stay below it; one that execs Python again is itself again."""

import json
import os
import re
import signal

from conftest import expect_all, program, wait_until


def ps(dpdb):
    done = dpdb.run("dpdb", "ps", "--json")
    assert done.returncode == 0, done.stderr
    return {p["pid"]: p for p in json.loads(done.stdout)}


def test_an_exec_shows_the_new_program_still_running(dpdb):
    run = dpdb.spawn("dpdb", "run", program("execs.py"))
    started, again, grandchild = expect_all(
        run, r"execs started (\d+) (\d+) (\d+)", r"again (\d+)", r"grandchild (\d+)")
    shell, spawned, python = (int(pid) for pid in started.groups())
    grandchild = int(grandchild.group(1))
    for pid in (shell, spawned, python, grandchild):
        dpdb.track(pid)
    assert int(again.group(1)) == python
    sh = os.path.realpath("/bin/sh")
    sleep = os.path.realpath(dpdb.run("sh", "-c", "command -v sleep").stdout.strip())

    def settled():
        processes = ps(dpdb)
        return (processes.get(shell, {}).get("state") == "exec'd %s, running" % sh
                and processes.get(spawned, {}).get("state") == "exec'd %s, running" % sleep
                and processes.get(python, {}).get("state") == "running"
                and grandchild in processes)

    try:
        wait_until(settled, "the three execs shown")
    except AssertionError:
        raise AssertionError("the three execs not shown: shell %d, sleep %d, python %d in\n%s"
                             % (shell, spawned, python, dpdb.run("dpdb", "ps").stdout))
    processes = ps(dpdb)
    assert processes[shell]["argv"][:2] == ["/bin/sh", "-c"]
    assert processes[spawned]["argv"] == ["sleep", "60"]
    assert processes[python]["argv"][-1] == "again"
    assert processes[grandchild]["ppid"] == shell

    table = dpdb.run("dpdb", "ps").stdout
    assert "vanished" not in table, table
    lines = table.splitlines()
    # The grandchild is drawn below the shell; every command starts in the COMMAND column.
    rows = {int(re.search(r"(\d+) ", line).group(1)): n for n, line in enumerate(lines[1:], 1)}
    assert rows[grandchild] > rows[shell] and "└─ %d" % grandchild in lines[rows[grandchild]]
    column = lines[0].index("COMMAND")
    assert lines[rows[spawned]][column:].startswith("sleep 60  "), table
    assert lines[rows[shell]][column:].startswith("sh -c "), table
    assert lines[rows[shell]].endswith("exec'd %s, running" % sh), table

    # Once the program it became ends, the hub, which sees it, says so.
    os.kill(spawned, signal.SIGKILL)
    wait_until(lambda: ps(dpdb)[spawned]["state"] == "exec'd %s, since ended" % sleep,
               "the end of the exec'd program")
    run.terminate(force=True)


def test_a_failed_exec_is_not_taken_for_one(dpdb):
    run = dpdb.spawn("dpdb", "run", program("exec_fails.py"))
    run.expect(r"exec failed (\d+)")
    child = int(run.match.group(1))
    wait_until(lambda: child in ps(dpdb) and ps(dpdb)[child]["state"] != "running",
               "the child's end")
    assert ps(dpdb)[child]["state"].startswith("vanished"), ps(dpdb)[child]
    run.terminate(force=True)
