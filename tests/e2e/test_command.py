"""`python -c` programs: CPython names their code "<string>", and a breakpoint spec
`<string>:LINE` (as pdb shows the file) means the lines of the `-c` program, both in
`dpdb break` and in `b` at a prompt; pdb lists its source."""

import os

from conftest import PROMPT, expect_all, finish, line_of, program

LAUNCHER = program("command.py")
BODY = program("command_body.py")  # the -c program's text: its lines are "<string>"'s


def test_a_breakpoint_in_python_c_code_stops_and_lists_its_lines(dpdb):
    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", LAUNCHER, go)
    run.expect("command ready")
    total, returns = line_of(BODY, "# line: total"), line_of(BODY, "# line: return")
    added = dpdb.run("dpdb", "break", "<string>:%d" % total)
    assert added.returncode == 0, added.stderr
    # The -c process arms it; the launcher, a script, has no "<string>" of its own.
    assert "armed in 1 process" in added.stdout, added.stdout
    open(go, "w").close()
    expect_all(run, r"attached to session \d+: pid \d+[^\r\n]*, at <string>:%d in work\(\)" % total,
               r"<string>\(%d\)work\(\)" % total)
    run.expect(PROMPT)
    run.sendline("l")
    run.expect(r"%d B->\s+total = sum\(range\(rows\)\)" % total)
    run.expect(PROMPT)
    run.sendline("b <string>:%d" % returns)
    run.expect(r"Breakpoint \d+ at <string>:%d" % returns)
    run.expect(PROMPT)
    run.sendline("c")
    run.expect(r"<string>\(%d\)work\(\)" % returns)
    run.expect(PROMPT)
    run.sendline("p total")
    run.expect(r"\r\n10\r\n")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("command result 10")
    finish(run)


def test_a_breakpoint_in_python_c_code_of_a_line_it_does_not_have_says_so(dpdb):
    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", LAUNCHER, go)
    run.expect("command ready")
    added = dpdb.run("dpdb", "break", "<string>:900")
    assert added.returncode == 0, added.stderr
    assert "Line <string>:900 does not exist" in added.stdout, added.stdout
    open(go, "w").close()
    run.expect("command result 10")
    finish(run)
