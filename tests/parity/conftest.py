import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")


def _dpdb_path():
    """sys.path entry that holds the dpdb package the tests import (installed or a scratch dir)."""
    try:
        import dpdb
    except ImportError:
        return None
    return os.path.dirname(os.path.dirname(os.path.abspath(dpdb.__file__)))


def native_import_error():
    try:
        import dpdb._engine_native  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return None


def run_driver(kind, program, commands, engine=None, timeout=60, audit_hook=False):
    env = dict(os.environ)
    env.pop("DPDB_ENGINE", None)
    if engine:
        env["DPDB_ENGINE"] = engine
    env["DPDB_PARITY_AUDIT_HOOK"] = "1" if audit_hook else "0"
    path = [p for p in (_dpdb_path(), env.get("PYTHONPATH")) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode writing on, as users have it
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "driver.py"), kind, os.path.join(PROGRAMS, program)],
        input="\n".join(commands) + "\n",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        timeout=timeout,
        cwd=PROGRAMS,
        env=env,
    )
    return proc.returncode, proc.stdout


@pytest.fixture(scope="session")
def native_available():
    return native_import_error() is None
