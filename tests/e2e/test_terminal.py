"""`dpdb run`'s terminal: the program's lines stay whole whatever dpdb has to say meanwhile
(cli/terminal_lines), and under pdb's single process it looks like pdb."""

import re

from conftest import PROMPT, finish, line_of, program, stop_line
from test_hub import Hub

CHATTER = program("chatter.py")
ROUNDS = 40


def test_notices_never_split_a_line_of_the_program(dpdb):
    hub = Hub(dpdb)
    beat = line_of(CHATTER, "chatter: one beat")
    added = dpdb.run("dpdb", "break", "chatter.py:%d" % beat, "--log", "beat {beat}",
                     env=hub.env)
    assert added.returncode == 0, added.stderr
    run = dpdb.spawn("dpdb", "run", CHATTER, str(ROUNDS), env=hub.env)
    run.expect("chatter done")
    finish(run, 0)
    lines = run.logfile_read.getvalue().replace("\r", "").split("\n")
    ticks = [line for line in lines if "tick" in line]
    assert ticks == ["tick %d" % i for i in range(ROUNDS)], ticks
    beats = [line for line in lines if "beat " in line]
    assert len(beats) == ROUNDS and all(line.startswith("[dpdb] ") for line in beats), beats
    # The program writes to a terminal of dpdb's (its stdin stays the user's).
    stdin, stdout = re.search(r"terminals (\S+) (\S+)", run.logfile_read.getvalue()).groups()
    assert stdin != stdout


def test_direct_output_is_a_named_strategy(dpdb):
    run = dpdb.spawn("dpdb", "run", CHATTER, "1", env={"DPDB_PROGRAM_OUTPUT": "direct"})
    run.expect(r"terminals (\S+) (\S+)\r\n")
    assert run.match.group(1) == run.match.group(2)
    run.expect("chatter done")
    finish(run, 0)
