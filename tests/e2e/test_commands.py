"""Every pdb command works through the hub, and prints what the interpreter's own pdb prints.

Each scenario is typed twice, in a pseudo-terminal: once at the stdlib pdb of this interpreter
(`python commands.py`, breakpoint() being pdb's), once at `dpdb run commands.py`. What each command
prints must be the same, apart from dpdb's own notices and prompt label."""

import difflib
import re

import pexpect
import pytest

from conftest import PROMPT, PYTHON, STOPS_ON_CALL, line_of, plain, program

PROGRAM = program("commands.py")
TOTAL = line_of(PROGRAM, "# line: total")
LABELS = line_of(PROGRAM, "# line: labels")
LOOP = line_of(PROGRAM, "# line: loop")
AFTER_LOOP = line_of(PROGRAM, "# line: after loop")

# What a command leaves the debugger waiting for.
PROMPTS = {
    "pdb": PROMPT,
    "com": r"\(com\) ",
    "py": r">>> ",
    "confirm": r"Clear all breaks\? ",
    "end": pexpect.EOF,
}
LABEL = re.compile(r"\[\d+ pid \d+(?: \+\d+ waiting)?\] ")
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")

# Each ends with the command that lets the program finish.
SCENARIOS = {
    "listing": ["l", "l", "l 1, 5", "l .", "ll", "w", "c"],
    "stepping": ["s", "a", "n", "n", "s", "s", "a", "r", "retval", "rv", "n",
                 "unt %d" % AFTER_LOOP, "p total, i", "r", "retval", "n", "w", "c"],
    "until": ["s", "n", "n", "n", "n", "n", "unt", "unt", "p i, total", "c"],
    "jump": ["n", "p total", "j %d" % TOTAL, "!count = 4", "p count", "n", "p total", "j 1000",
             "c"],
    # A local assigned at a stop that stepping reached is what the program goes on with.
    "locals": ["n", "!total = 40", "p total", "n", "p total", "c"],
    "breakpoints": ["b square", "tbreak describe", "b %d" % LABELS, "b", "disable 1", "b",
                    "enable 1", "condition 1 n == 2", "ignore 3 1", "b", "c", "p n", "c",
                    "p data", "cl 1", "b", "cl %s:%d" % (PROGRAM, LABELS), "b", "c"],
    "clear all": ["b square", "b describe", ("cl", "confirm"), "y", "b", "c"],
    "commands": ["b square", ("commands 1", "com"), ("silent", "com"), ("p 'hit', n", "com"),
                 "end", "c", "c", "cl 1", "c"],
    # Commands that end by resuming prompt nobody: what they print is still seen.
    "commands that continue": ["b square", ("commands 1", "com"), ("p 'hit', n", "com"),
                               "continue", "c"],
    "display": ["b %d" % LOOP, "c", "display i", "display total", "c", "c", "display",
                "undisplay total", "c", "display", "undisplay", ("cl", "confirm"), "y", "c"],
    "frames": ["b square", "c", "w", "u", "p count, i", "u", "p sorted(data)", "d", "d", "d",
               "a", "u", "u", "u", "u", ("cl", "confirm"), "y", "c"],
    "inspect": ["p data", "pp data", "p count + 1", "whatis data", "whatis square", "p missing",
                "!data['alpha'] = 10", "p data['alpha']", "!count = 4", "p count",
                "alias ps p sorted(%1)", "ps data", "alias", "alias ps", "unalias ps", "ps data",
                "h p", "h alias", "c"],
    "interact": [("interact", "py"), ("count * 2", "py"), ("sorted(data)[0]", "py"),
                 ("^D", "pdb"), "p count", "c"],
}


def transcript(child, steps):
    """What the debugger printed for each step: [(command, output, prompt kind)], the first item
    being the stop itself."""
    child.expect(PROMPT)
    out = [("", child.before, "pdb")]
    for number, step in enumerate(steps, 1):
        command, kind = step if isinstance(step, tuple) else (step, "pdb")
        if number == len(steps):
            kind = "end"
        if command == "^D":
            child.sendcontrol("d")
        else:
            child.sendline(command)
        child.expect(PROMPTS[kind])
        out.append((command, child.before, kind))
    child.close()
    assert child.exitstatus == 0, child.before
    return out


NOTICE = re.compile(r"\[dpdb\] [^\n]*(\n|$)")


def normalise(command, text):
    # dpdb's notices go: they may even split a line the program writes in two writes.
    lines = NOTICE.sub("", plain(LABEL.sub("", text))).split("\n")
    if command == "^D":
        # libedit shows the Ctrl-D it takes as end of input (readline shows nothing).
        if lines[0].strip() == "^D":
            lines = lines[1:]
    elif command:
        # The echo of what was typed (and whatever the line editor redrew on it).
        assert lines[0].strip() == command, (command, lines[0])
        lines = lines[1:]
    return ADDRESS.sub("0x…", "\n".join(lines)).strip("\n")


def compare(expected, actual):
    assert [c for c, _, _ in expected] == [c for c, _, _ in actual]
    problems = []
    for (command, want, _), (_, got, _) in zip(expected, actual):
        want, got = normalise(command, want), normalise(command, got)
        if want != got:
            diff = "\n".join(difflib.unified_diff(want.split("\n"), got.split("\n"), "pdb",
                                                  "dpdb", lineterm=""))
            problems.append("after %r:\n%s" % (command, diff))
    assert not problems, "\n\n".join(problems)


# From 3.13 on the first stop is at breakpoint() itself: one `n` takes both debuggers to the line
# where the scenarios start on earlier versions.
START = ["n"] if STOPS_ON_CALL else []


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_command_prints_what_pdb_prints(dpdb, scenario):
    steps = START + SCENARIOS[scenario]
    expected = transcript(dpdb.spawn(PYTHON, PROGRAM), steps)
    actual = transcript(dpdb.spawn("dpdb", "run", PROGRAM), steps)
    compare(expected, actual)
    # Not vacuous: the commands printed something other than errors, and the program ran to
    # its end.
    printed = [normalise(c, text) for c, text, _ in actual[1:]]
    assert any(text and not text.startswith("***") for text in printed[:-1]), printed
    assert "program done" in printed[-1]


def help_sections(text):
    """`h` output: {section title: set of the words listed under it}."""
    sections, title, lines = {}, None, text.split("\n")
    for number, line in enumerate(lines):
        if number + 1 < len(lines) and set(lines[number + 1].strip()) == {"="}:
            title = line.strip()
            sections[title] = set()
        elif title and line.strip() and set(line.strip()) != {"="}:
            sections[title].update(line.split())
    return sections


def test_help_lists_what_pdb_lists(dpdb):
    steps = ["h", "c"]
    expected = help_sections(normalise("h", transcript(dpdb.spawn(PYTHON, PROGRAM), steps)[1][1]))
    actual = help_sections(normalise("h", transcript(dpdb.spawn("dpdb", "run", PROGRAM),
                                                     steps)[1][1]))
    assert expected
    documented = "Documented commands (type help <topic>):"
    misc = "Miscellaneous help topics:"
    assert {"p", "pp", "interact", "commands", "retval", "until"} <= expected[documented]
    # dpdb's own pdb command (a logpoint typed at the prompt) is documented beside pdb's.
    assert actual[documented] == expected[documented] | {"logpoint"}
    # The client's own commands have help topics too.
    assert actual[misc] == expected[misc] | {"detach", "sessions", "switch"}
    assert set(actual) == set(expected)
    for title in set(expected) - {documented, misc}:
        assert actual[title] == expected[title], title


def test_clear_all_asks_the_attached_client(dpdb):
    """`cl` asks for confirmation with input(): the question must reach whoever is attached,
    not the program's own terminal."""
    run = dpdb.spawn("dpdb", "run", PROGRAM)
    run.expect(r"attached to session (\d+)")
    sid = int(run.match.group(1))
    run.expect(PROMPT)
    run.sendline("detach")
    run.expect("detached from session %d" % sid)
    other = dpdb.spawn("dpdb", "attach", str(sid))
    other.expect(r"attached to session %d" % sid)
    other.expect(PROMPT)
    other.sendline("b square")
    other.expect(r"Breakpoint 1 at .*commands.py:\d+")
    other.expect(PROMPT)
    other.sendline("cl")
    other.expect(r"\[%d pid \d+\] Clear all breaks\? " % sid)
    other.sendline("y")
    other.expect(r"Deleted breakpoint 1 at .*commands.py:\d+")
    other.expect(PROMPT)
    other.sendline("b")
    other.expect(PROMPT)
    assert "Breakpoint" not in plain(other.before)
    other.sendline("c")
    other.expect("session %d continued" % sid)
    other.expect(pexpect.EOF)
    run.expect("program done")
    run.expect(pexpect.EOF)
    # The program's terminal never saw the question.
    assert "Clear all breaks" not in run.logfile_read.getvalue()
