"""gevent (monkey-patched) under `dpdb run`: a greenlet's session is labelled by the greenlet,
not by the Dummy-N thread gevent's threading makes for it, and `dpdb stacks` shows the main
thread by its name with the greenlet it runs, the suspended greenlets as greenlets with their
frames, and none of dpdb's own threads. Real gevent from PyPI: dev/test runs this in
build/venv-frameworks; elsewhere it skips."""

import json
import os

import pytest

from conftest import PROMPT, finish, line_of, program

GREENLETS = os.path.join(program("frameworks"), "gevent_greenlets.py")


def test_a_greenlets_session_and_stacks_show_greenlets(dpdb):
    pytest.importorskip("gevent")
    run = dpdb.spawn("dpdb", "run", GREENLETS)
    run.expect(r"attached to session \d+: pid (\d+)[^\r\n]*, thread Greenlet-\d+ \(greenlet\), "
               r"at gevent_greenlets\.py:\d+ in worker\(\)")
    pid = int(run.match.group(1))
    run.expect(PROMPT)
    stacks = dpdb.run("dpdb", "stacks", str(pid))
    assert stacks.returncode == 0, stacks.stderr
    text = stacks.stdout
    assert "Thread MainThread (" in text and "in greenlet Greenlet-" in text, text
    assert "Greenlet sleeper (suspended)" in text, text
    assert "line %d, in sleeper" % line_of(GREENLETS, "# line: sleeper") in text, text
    assert "dpdb-" not in text and "Thread ?" not in text, text
    [entry] = json.loads(dpdb.run("dpdb", "stacks", "--json", str(pid)).stdout)
    assert [t["name"] for t in entry["stacks"]["threads"]] == ["MainThread"], entry
    run.sendline("p total")
    run.expect(r"\r\n10\r\n")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect_exact("worker done 10")
    run.expect_exact("main done")
    finish(run, 0)
