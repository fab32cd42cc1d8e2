"""The wheels that dev/wheels built into dist/: tagged manylinux with no library beyond the policy,
and working from a fresh virtual environment where the build machine's libedit, OpenSSL, SQLite,
ncurses (libtinfo) and libbsd cannot be loaded: a mount namespace puts an empty file over each.
Not named test_*: `pytest tests` leaves it out (the wheels must be built first); dev/test's
"Wheels" step names it."""

import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pexpect
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DIST = os.path.join(ROOT, "dist")
PLATFORM = "manylinux_2_17_x86_64"
PROMPT = r"\(Pdb\) "
TIMEOUT = 60
# What the wheels carry inside, as the build machine's shared libraries.
HIDDEN = ("libedit.so", "libssl.so", "libcrypto.so", "libsqlite3.so", "libtinfo.so", "libbsd.so",
          "libncurses.so", "libncursesw.so")
LIBRARY_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/lib/x86_64-linux-gnu",
                "/usr/lib/x86_64-linux-gnu", "/usr/local/lib")


def interpreters():
    found = subprocess.run([os.path.join(ROOT, "dev", "pythons")], capture_output=True, text=True,
                           check=True)
    return found.stdout.split()


def wheel_for(python):
    tag = subprocess.run([python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    found = glob.glob(os.path.join(DIST, "dpdb-*-%s-%s-*%s*.whl" % (tag, tag, PLATFORM)))
    assert len(found) == 1, "no single %s wheel for %s in dist/: %s" % (tag, python, found)
    return found[0]


def hidden_files():
    files = set()
    for folder in LIBRARY_DIRS:
        for path in glob.glob(os.path.join(folder, "lib*.so*")):
            name = os.path.basename(path)
            if any(name == lib or name.startswith(lib + ".") for lib in HIDDEN):
                files.add(os.path.realpath(path))
    return sorted(files)


NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                reason="hides libraries in a mount namespace: needs root and unshare")


@pytest.fixture(scope="module")
def hide(tmp_path_factory):
    """The command line prefix that runs a command where HIDDEN's libraries cannot be loaded."""
    files = hidden_files()
    # The build machine has them (dev/setup installs them): otherwise this would prove nothing.
    assert any("libssl" in f for f in files) and any("libedit" in f for f in files), files
    empty = tmp_path_factory.mktemp("hidden") / "empty"
    empty.write_bytes(b"")
    mounts = " && ".join("mount --bind %s %s" % (empty, f) for f in files)
    return ["unshare", "-m", "sh", "-c", mounts + ' && exec "$@"', "hide"]


def install(python, wheel, venv):
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
                    "--no-deps", "--disable-pip-version-check", wheel], check=True, timeout=120)
    return venv / "bin"


def environment(bin_dir, root):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DPDB_", "PYTHON"))}
    env.update({"PATH": "%s:%s" % (bin_dir, os.environ["PATH"]), "TERM": "xterm",
                "HOME": str(root / "home"), "XDG_RUNTIME_DIR": str(root / "run"),
                "PYTHONUNBUFFERED": "1"})
    for folder in ("home", "run"):
        (root / folder).mkdir(mode=0o700)
    return env


@pytest.mark.parametrize("python", interpreters())
def test_auditwheel_finds_the_tag_and_no_library_outside_the_policy(python):
    shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", wheel_for(python)],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert 'consistent with the following platform tag: "%s"' % PLATFORM in text, text
    assert "external shared libraries are required" not in text, text


@NEEDS_ROOT
@pytest.mark.parametrize("python", interpreters())
def test_each_wheel_runs_where_the_libraries_are_hidden(python, hide, tmp_path):
    bin_dir = install(python, wheel_for(python), tmp_path / "venv")
    env = environment(bin_dir, tmp_path)

    def hidden(*command):
        return subprocess.run(hide + list(command), capture_output=True, text=True, env=env,
                              timeout=120, stdin=subprocess.DEVNULL)

    # The namespace hides what it should: the interpreter's own ssl module cannot load there.
    assert hidden(str(bin_dir / "python"), "-c", "import ssl").returncode != 0
    for command in ([str(bin_dir / "dpdb"), "--version"],
                    [str(bin_dir / "python"), "-m", "dpdb", "--version"]):
        done = hidden(*command)
        assert done.returncode == 0, done.stderr
        assert re.match(r"dpdb \d+\.\d+\.\d+ \(built for Python 3\.\d+\)\nPython \S+ \(%s[0-9.]*\), "
                        r"engine " % re.escape(str(bin_dir / "python")), done.stdout), done.stdout
        assert ", engine none" not in done.stdout and ", engine unusable" not in done.stdout
    done = hidden(str(bin_dir / "python"), "-c", "import dpdb._agent, dpdb._engine_native")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("python", interpreters())
def test_openssl_looks_for_modules_nowhere_a_user_can_write(python, tmp_path):
    """OpenSSL's module and engine folders, compiled into every binary that carries it, are not
    the build machine's folders (dev/wheels-deps), which a user of another machine could create."""
    with zipfile.ZipFile(wheel_for(python)) as wheel:
        wheel.extractall(tmp_path)
    binaries = [p for p in tmp_path.rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    carrying = 0
    for binary in binaries:
        text = subprocess.run(["strings", "-n", "6", str(binary)], capture_output=True, text=True,
                              check=True, timeout=120).stdout
        folders = [line for line in text.splitlines()
                   if re.search(r"ossl-modules|engines-\d|MODULESDIR|ENGINESDIR", line)]
        assert not [f for f in folders if "wheels-deps" in f or "/tmp/" in f], (binary.name, folders)
        # The engines' folder is compiled in only where something of the engine API is linked
        # (no-engine leaves it out): wherever it is, the check above covers it.
        if "/usr/lib/ssl/dpdb-no-modules" in text:
            carrying += 1
    assert carrying >= 1, [b.name for b in binaries]  # dpdb itself carries OpenSSL


def full_run_interpreter():
    found = interpreters()
    return next((p for p in found if p.endswith("python3.12")), found[-1])


@NEEDS_ROOT
def test_a_multiprocess_program_under_the_installed_wheel(hide, tmp_path):
    bin_dir = install(full_run_interpreter(), wheel_for(full_run_interpreter()), tmp_path / "venv")
    env = environment(bin_dir, tmp_path)
    command = hide + [str(bin_dir / "dpdb"), "run", os.path.join(HERE, "squares.py")]
    child = pexpect.spawn(command[0], command[1:], env=env, cwd=str(tmp_path), encoding="utf-8",
                          timeout=TIMEOUT, dimensions=(50, 200), codec_errors="replace")
    try:
        child.expect(r"attached to session \d+: pid \d+ SpawnPoolWorker")
        child.expect(PROMPT)
        child.sendline("p total")
        child.expect(r"\r\n49\r\n")
        child.expect(PROMPT)
        child.sendline("c")
        child.expect(r"results \[49\]")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0, (child.exitstatus, child.before)
    finally:
        if child.isalive():
            child.terminate(force=True)
