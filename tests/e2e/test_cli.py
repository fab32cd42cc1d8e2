"""The `dpdb` command itself: what gets installed, `dpdb run` with a module or a script and the
program's own arguments, labels and tags, `dpdb ls` for humans, `dpdb attach` when it cannot
choose, the private runtime directory, and dpdb's Python API."""

import json
import os
import re
import stat
import shutil
import subprocess
import sys

import pytest

from conftest import (
    DPDB, PROGRAMS, PROMPT, PYTHON, expect_all, finish, line_of, plain, program, stop_line)


def test_installed_executable_needs_no_python(dpdb):
    with open(DPDB, "rb") as f:
        assert f.read(4) == b"\x7fELF"  # a native executable, not a script
    libraries = subprocess.run(["ldd", DPDB], capture_output=True, text=True).stdout
    assert "libpython" not in libraries, libraries
    # Runs with an empty environment: no interpreter, no PATH, no PYTHONHOME.
    done = subprocess.run([DPDB, "--help"], env={}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    for command in ("run", "hub", "ls", "attach"):
        assert command in done.stdout
    # The agent for this interpreter, and the face programs import.
    done = dpdb.run(PYTHON, "-c", "import dpdb, dpdb._agent; print(sorted(dpdb.__all__))")
    assert done.returncode == 0 and "'post_mortem', 'set_trace'" in done.stdout, done.stderr


def test_version_names_the_interpreter_and_its_engine(dpdb):
    done = dpdb.run("dpdb", "--version")
    assert done.returncode == 0, done.stderr
    version = "%d.%d" % sys.version_info[:2]
    assert re.match(r"dpdb \d+\.\d+\.\d+ \(built for Python %s\)\n"
                    r"Python %s\.\d+ \(.*\), engine native on (tracer|monitoring)\n"
                    r"programs run with it: the python%s beside dpdb \(its venv or Python prefix\)\n"
                    % ((re.escape(version),) * 3), done.stdout), done.stdout
    done = dpdb.run("dpdb", "--version", env={"DPDB_ENGINE": "bdb"})
    assert done.stdout.splitlines()[1].endswith("engine bdb"), done.stdout
    done = dpdb.run("dpdb", "--version", env={"DPDB_PYTHON": PYTHON})
    assert done.stdout.splitlines()[2] == (
        "programs run with it: named by DPDB_PYTHON (which `python -m dpdb` sets to itself)"), \
        done.stdout


def test_python_m_dpdb_works_without_the_scripts_folder_on_path(dpdb):
    """A container or a user install whose script folder is not on PATH: `python -m dpdb`."""
    bare = {"PATH": "/usr/bin:/bin"}
    done = dpdb.run(PYTHON, "-m", "dpdb", "--version", env=bare)
    assert done.returncode == 0, done.stderr
    assert "Python %d.%d" % sys.version_info[:2] in done.stdout
    run = dpdb.spawn(PYTHON, "-m", "dpdb", "run", "-m", "sessions", env=bare, cwd=PROGRAMS)
    run.expect(r"attached to session \d+")
    run.expect(PROMPT)
    run.sendline("p sys.executable == %r" % PYTHON)
    run.expect("True")
    run.expect(PROMPT)
    run.sendline("c")
    expect_all(run, "results", "program done")
    finish(run, 0)


def test_run_module_with_its_own_arguments(dpdb):
    # Options after the module are the program's, even those dpdb has itself.
    run = dpdb.spawn("dpdb", "run", "-m", "sessions", "--post-mortem", "-m", "x", "--hub", "y",
                     cwd=PROGRAMS)
    run.expect(r"attached to session \d+")
    run.expect(PROMPT)
    run.sendline("p __name__, sys.argv[1:]")
    run.expect(r"\('__main__', \['--post-mortem', '-m', 'x', '--hub', 'y'\]\)")
    run.expect(PROMPT)
    run.sendline("c")
    expect_all(run, "results", "program done")
    finish(run, 0)


def test_api_post_mortem_and_set_trace(dpdb):
    path = program("api.py")
    run = dpdb.spawn("dpdb", "run", path, "--port", "1", "-m", "x")
    run.expect(r"args \['--port', '1', '-m', 'x'\]")
    run.expect(r"attached to session (\d+): [^\r\n]* at api\.py:%d in compute\(\)"
               % line_of(path, "# line: raise"))
    first = int(run.match.group(1))
    run.expect(r"-> ratio = 1 / 0")
    run.expect(PROMPT)
    run.sendline("p type(sys.exc_info()[1]).__name__ if sys.exc_info()[1] else 'post-mortem'")
    run.expect(PROMPT)
    run.sendline("c")
    # set_trace(header=...): the header comes first, then the stop.
    run.expect(r"attached to session (\d+)")
    assert int(run.match.group(1)) != first
    run.expect("api header for value")
    run.expect(stop_line(r"say\(", r"dpdb\.set_trace\(header="))
    run.expect(PROMPT)
    run.sendline("p value, ratio")
    run.expect(r"\(7, None\)")
    run.expect(PROMPT)
    run.sendline("c")
    expect_all(run, "value 7 ratio None", "program done")
    finish(run, 0)


def test_labels_carry_tags(dpdb):
    run = dpdb.spawn("dpdb", "run", program("sessions.py"),
                     env={"RANK": "3", "DPDB_TAGS": "role=trainer"})
    run.expect(r"attached to session (\d+): pid (\d+) \[([^\]]*)\] ")
    pid, tags = int(run.match.group(2)), run.match.group(3).split(",")
    assert sorted(tags) == ["rank=3", "role=trainer"]
    run.expect(PROMPT)
    listing = dpdb.ls()
    [process] = [p for p in listing["processes"] if p["pid"] == pid]
    assert process["tags"] == {"RANK": "3", "role": "trainer"}
    table = dpdb.run("dpdb", "ls")
    assert "rank=3" in table.stdout and "role=trainer" in table.stdout
    run.sendline("c")
    run.expect("program done")
    finish(run, 0)


def test_ls_for_humans(dpdb):
    run = dpdb.spawn("dpdb", "run", program("sessions.py"))
    run.expect(r"attached to session (\d+): pid (\d+)")
    sid, pid = run.match.group(1), run.match.group(2)
    run.expect(PROMPT)
    done = dpdb.run("dpdb", "ls")
    assert done.returncode == 0, done.stderr
    lines = plain(done.stdout).split("\n")
    assert lines[0] == "1 process(es), 1 paused session(s)", lines
    header = lines.index(next(l for l in lines if l.startswith("SESSION")))
    assert lines[header].split() == ["SESSION", "PID", "HOST", "TAGS", "THREAD", "WHERE", "PAUSED",
                                     "ATTACHED"]
    row = lines[header + 1].split()
    assert row[0] == sid and row[1] == pid and "MainThread" in row
    assert re.search(r"sessions\.py:\d+ in main\(\)", " ".join(row)), row
    assert row[-1] == "yes"
    processes = lines.index(next(l for l in lines if l.startswith("PID")))
    process = lines[processes + 1].split()
    assert process[0] == pid and process[4 if len(process) > 7 else 3].startswith("3.")
    assert "sessions.py" in lines[processes + 1]
    run.sendline("c")
    run.expect("program done")
    finish(run, 0)


def test_attach_without_a_number_when_several_wait(dpdb):
    fifo = os.path.join(dpdb.root, "lines")
    os.mkfifo(fifo)
    run = dpdb.spawn("dpdb", "run", program("threads.py"), fifo)
    expect_all(run, r"attached to session (\d+)", r"session (\d+) paused")
    run.expect(PROMPT)
    done = dpdb.run("dpdb", "attach")
    assert done.returncode == 2
    assert "several sessions are paused; say which" in done.stderr, done.stderr
    assert done.stderr.count("worker-") == 2, done.stderr  # the table to choose from
    with open(fifo, "w"):
        pass  # the counter thread ends
    run.sendline("c")
    run.expect(r"attached to session \d+")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("main done")
    finish(run, 0)


def test_runtime_directory_is_private(dpdb):
    run = dpdb.spawn("dpdb", "run", program("sessions.py"))
    run.expect(PROMPT)
    directory = os.path.join(dpdb.env["XDG_RUNTIME_DIR"], "dpdb-%d" % os.getuid())
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    names = os.listdir(directory)
    sockets = [n for n in names if n.endswith(".sock")]
    assert len(sockets) == 1, names
    socket_path = os.path.join(directory, sockets[0])
    assert stat.S_ISSOCK(os.stat(socket_path).st_mode)
    assert stat.S_IMODE(os.stat(socket_path + ".token").st_mode) == 0o600
    run.sendline("c")
    run.expect("program done")
    finish(run, 0)
    # A run cleans up after itself.
    assert not os.path.exists(socket_path) and not os.path.exists(socket_path + ".token")


@pytest.mark.parametrize("where", ["before", "after"])
def test_hub_option_names_the_hub(dpdb, where):
    path = os.path.join(dpdb.root, "hub.sock")
    hub = dpdb.spawn("dpdb", "hub", "--socket", path)
    hub.expect("listening")
    args = ["--hub", "unix:" + path]
    command = ["dpdb"] + (args + ["ls", "--json"] if where == "before" else ["ls", "--json"] + args)
    done = dpdb.run(*command)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"processes": [], "sessions": []}



@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("cmake") or not shutil.which("unshare"),
                    reason="hides headers in a mount namespace: needs root, cmake and unshare")
def test_a_source_build_names_the_missing_packages_in_one_line(tmp_path):
    """Configured where libedit's headers and CLI11's and nlohmann_json's CMake files cannot be
    found (a mount namespace hides them), the build names the three Debian packages in one line
    before CMake's own error."""
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    empty = tmp_path / "empty"
    empty.mkdir()
    hidden = ("/usr/include/editline", "/usr/share/cmake/CLI11", "/usr/share/cmake/nlohmann_json")
    script = " && ".join(["mount --bind %s %s" % (empty, folder) for folder in hidden] + [
        "cmake -S %s -B %s -G Ninja" % (source, tmp_path / "build")])
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    line = next(line for line in done.stderr.splitlines() if line.startswith("dpdb: "))
    assert line.startswith("dpdb: to build from source, install: sudo apt-get install "), line
    for package in ("nlohmann-json3-dev", "libcli11-dev", "libedit-dev"):
        assert package in line
