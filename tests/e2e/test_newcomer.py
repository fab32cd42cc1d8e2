"""A newcomer's first hour: one local hub per user whoever starts it, the interpreter a `--user`
installation was made for, nothing left behind by a run with bytecode writing on, and every option
the documents name accepted by the command they name it for."""

import glob
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import DPDB, PROGRAMS, PROMPT, expect_all, finish, program, wait_until
from test_attach import Target

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERSION = "%d.%d" % sys.version_info[:2]
# The interpreter itself, outside the test's virtual environment (a user's python3.X).
PLAIN_PYTHON = os.path.join(sys.base_prefix, "bin", "python" + VERSION)
PACKAGE = importlib.util.find_spec("dpdb").submodule_search_locations[0]


def test_second_hub_names_the_first_and_leaves_it_serving(dpdb):
    target = Target(dpdb, "sleep")
    try:
        target.expect("ready")
        attached = dpdb.run("dpdb", "attach", "-p", str(target.pid), "--no-pause")
        assert attached.returncode == 0, attached.stderr
        started = re.search(r"started your local hub on unix:(\S+) \(pid (\d+), log \S+\); .*"
                            r"`dpdb hub --stop`", attached.stdout)
        assert started, attached.stdout
        socket_path, hub_pid = started.group(1), int(started.group(2))
        dpdb.track(hub_pid)
        assert socket_path == os.path.join(dpdb.env["XDG_RUNTIME_DIR"], "dpdb-%d" % os.getuid(),
                                           "hub.sock")

        second = dpdb.run("dpdb", "hub")
        assert second.returncode != 0
        assert ("a hub runs already on unix:%s (pid %d)" % (socket_path, hub_pid)
                in second.stderr), second.stderr
        assert "dpdb hub --stop" in second.stderr
        assert target.pid in [p["pid"] for p in dpdb.ls()["processes"]]

        stopped = dpdb.run("dpdb", "hub", "--stop")
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout == "stopped the hub on %s (pid %d)\n" % (socket_path, hub_pid)
        assert not os.path.exists(socket_path)
        again = dpdb.run("dpdb", "hub", "--stop")
        assert again.stdout == "no hub on %s\n" % socket_path, again.stdout
    finally:
        target.kill()
        dpdb.run("dpdb", "hub", "--stop")


def other_python():
    """A real python3 of another version than this one: the system's or a pyenv sibling's."""
    candidates = ["/usr/bin/python3"] + sorted(
        glob.glob(os.path.join(os.path.dirname(sys.base_prefix), "3.*", "bin", "python3")))
    for candidate in candidates:
        if not os.access(candidate, os.X_OK):
            continue
        said = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30)
        if said.returncode == 0 and said.stdout.strip() not in ("", VERSION):
            return candidate
    return None


def test_user_install_runs_its_own_interpreter_not_python3_on_path(dpdb):
    """`pip install --user`: dpdb in USERBASE/bin, with no interpreter beside it, the package in
    USERBASE/lib/pythonX.Y/site-packages; a python3 of another version first on PATH."""
    other = other_python()
    if other is None:
        pytest.skip("no python3 of another version than %s here" % VERSION)
    userbase = os.path.join(dpdb.root, "userbase")
    site = os.path.join(userbase, "lib", "python" + VERSION, "site-packages")
    shutil.copytree(PACKAGE, os.path.join(site, "dpdb"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    os.makedirs(os.path.join(userbase, "bin"))
    user_dpdb = os.path.join(userbase, "bin", "dpdb")
    shutil.copy2(DPDB, user_dpdb)
    first = os.path.join(dpdb.root, "first-on-path")
    os.makedirs(first)
    os.symlink(other, os.path.join(first, "python3"))
    env = {"PYTHONUSERBASE": userbase,
           "PATH": os.pathsep.join([first, os.path.join(userbase, "bin"),
                                    os.path.dirname(PLAIN_PYTHON), "/usr/bin", "/bin"])}

    version = dpdb.run(user_dpdb, "--version", env=env)
    assert version.returncode == 0, version.stderr
    assert "\nPython %s." % VERSION in version.stdout, version.stdout
    assert "engine native" in version.stdout, version.stdout
    assert ("programs run with it: the python%s on PATH, whose site-packages (%s) holds dpdb"
            % (VERSION, site)) in version.stdout, version.stdout

    run = dpdb.spawn(user_dpdb, "run", program("sessions.py"), env=env, cwd=PROGRAMS)
    run.expect(r"attached to session \d+")
    run.expect(PROMPT)
    run.sendline("p sys.version_info[:2], sys.modules['dpdb'].__file__.startswith(%r)" % site)
    run.expect(r"\(%d, %d\), True" % sys.version_info[:2])
    run.expect(PROMPT)
    run.sendline("c")
    expect_all(run, "results", "program done")
    finish(run, 0)


def test_run_with_bytecode_writing_on_leaves_the_runtime_directory_as_it_was(dpdb):
    runtime = os.path.join(dpdb.env["XDG_RUNTIME_DIR"], "dpdb-%d" % os.getuid())
    assert dpdb.run("dpdb", "ls").returncode != 0  # no hub yet; makes the runtime directory
    before = sorted(os.listdir(runtime))
    run = dpdb.spawn("dpdb", "run", program("sessions.py"), cwd=PROGRAMS)
    run.expect(PROMPT)
    run.sendline("c")
    expect_all(run, "results", "program done")
    finish(run, 0)
    assert sorted(os.listdir(runtime)) == before


def test_run_joins_the_hub_given_with_hub(dpdb):
    hub = dpdb.spawn("dpdb", "hub", "--socket", os.path.join(dpdb.root, "mine.sock"))
    hub.expect(r"dpdb hub listening on (unix:\S+)")
    address = hub.match.group(1)
    run = dpdb.spawn("dpdb", "run", "--hub", address, program("sessions.py"), cwd=PROGRAMS)
    run.expect(r"attached to session \d+")
    run.expect(PROMPT)
    assert [p["pid"] for p in dpdb.ls("--hub", address)["processes"]]
    run.sendline("c")
    expect_all(run, "results", "program done")
    finish(run, 0)
    # The hub that serves this user is the one DPDB_HUB names: that is the one --stop stops.
    stopped = dpdb.run("dpdb", "hub", "--stop", env={"DPDB_HUB": address})
    assert stopped.stdout == "stopped the hub on %s (pid %d)\n" % (address[len("unix:"):], hub.pid)
    finish(hub, 0)
    remote = dpdb.run("dpdb", "hub", "--stop", env={"DPDB_HUB": "tcp://127.0.0.1:7777"})
    assert remote.returncode == 2
    assert "tcp://127.0.0.1:7777 is not one (give --socket PATH)" in remote.stderr, remote.stderr


def test_an_unknown_command_is_named(dpdb):
    done = dpdb.run("dpdb", "foo")
    assert done.returncode == 2
    assert done.stderr.startswith('dpdb: no command "foo"; the commands are run, hub, ls'), \
        done.stderr
    usage = dpdb.run("dpdb", "ls", "--help")
    assert "\nUsage: dpdb ls [OPTIONS]" in usage.stdout, usage.stdout


# The commands documented with their options: `dpdb CMD --opt ...` in code spans and blocks.
DOCUMENTS = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
COMMAND_LINE = re.compile(r"(?:^|[\s(])dpdb((?: +[^\s|;&]+)+)")


def code_of(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, re.S)
    yield from (line for block in blocks for line in block.splitlines())
    yield from re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))


def documented_options():
    """(document, command or None for dpdb itself, option) for every option a document gives."""
    found = set()
    for path in DOCUMENTS:
        for code in code_of(path):
            for match in COMMAND_LINE.finditer(code):
                words = match.group(1).split(" #")[0].replace("[", " ").replace("]", " ")
                try:
                    words = shlex.split(words)
                except ValueError:
                    words = words.split()
                command = None if words[0].startswith("-") else words.pop(0)
                for word in words:
                    if command == "run" and (word == "-m" or not word.startswith("-")):
                        if word == "-m":
                            found.add((os.path.basename(path), command, word))
                        break  # what follows is the program's
                    if re.match(r"--?[a-z]", word):
                        found.add((os.path.basename(path), command, word.split("=")[0]))
    return sorted(found, key=lambda f: (f[0], f[1] or "", f[2]))


def test_every_documented_option_is_accepted_by_its_command(dpdb):
    options = documented_options()
    assert ("README.md", "hub", "--stop") in options and len(options) > 20, options
    helps = {}
    unknown = []
    for document, command, option in options:
        if command not in helps:
            done = dpdb.run("dpdb", *([command] if command else []), "--help")
            assert done.returncode == 0, (command, done.stderr)
            helps[command] = done.stdout
        if not re.search(r"(^|[\s,])%s\b" % re.escape(option), helps[command], re.M):
            unknown.append("%s: dpdb %s %s" % (document, command or "", option))
    assert not unknown, "documented but not accepted:\n" + "\n".join(unknown)


def running(pid):
    """Alive and not a zombie (the local hub is nobody's child: no one may reap it here)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_local_hub_exits_once_it_has_no_process(dpdb):
    target = Target(dpdb, "sleep")
    try:
        target.expect("ready")
        attached = dpdb.run("dpdb", "attach", "-p", str(target.pid), "--no-pause",
                            env={"DPDB_LOCAL_HUB_IDLE": "1"})
        assert attached.returncode == 0, attached.stderr
        started = re.search(r"started your local hub on unix:(\S+) \(pid (\d+), .* until it has "
                            r"had no process for 1 s", attached.stdout)
        assert started, attached.stdout
        socket_path, hub_pid = started.group(1), int(started.group(2))
        dpdb.track(hub_pid)
        assert target.pid in [p["pid"] for p in dpdb.ls()["processes"]]
        target.kill()
        wait_until(lambda: not running(hub_pid), "the idle local hub to exit")
        assert not os.path.exists(socket_path)
    finally:
        target.kill()
        dpdb.run("dpdb", "hub", "--stop")


def test_a_bad_idle_time_is_refused_before_any_hub_starts(dpdb):
    target = Target(dpdb, "sleep")
    try:
        target.expect("ready")
        done = dpdb.run("dpdb", "attach", "-p", str(target.pid), "--no-pause",
                        env={"DPDB_LOCAL_HUB_IDLE": "soon"})
    finally:
        target.kill()
    assert done.returncode == 2
    assert 'DPDB_LOCAL_HUB_IDLE wants a number of seconds, not "soon"' in done.stderr, done.stderr
    assert dpdb.run("dpdb", "hub", "--stop").stdout.startswith("no hub on")
