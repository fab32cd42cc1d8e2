"""_on_import runs a callback against a module once its body has run: now, later at its import,
or, for a module another thread is importing at that moment, at the control thread's next
catch_up() (an IDE arming the uncaught-exceptions filter mid-run installs framework hooks so)."""

import importlib.util
import pathlib
import sys
import threading

import pytest

FACE = pathlib.Path(__file__).resolve().parents[2] / "python" / "dpdb" / "_on_import.py"


@pytest.fixture
def on_import():
    spec = importlib.util.spec_from_file_location("dpdb_on_import_under_test", FACE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, module._OnImport)]


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A module whose body, imported in a thread, waits for `release` with `entered` set."""
    (tmp_path / "slow_body.py").write_text(
        "import builtins\n"
        "builtins._slow_body_entered.set()\n"
        "assert builtins._slow_body_release.wait(10)\n"
        "DONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import builtins
    builtins._slow_body_entered = threading.Event()
    builtins._slow_body_release = threading.Event()
    yield builtins
    sys.modules.pop("slow_body", None)
    del builtins._slow_body_entered, builtins._slow_body_release


def test_a_module_already_imported_is_called_back_at_once(on_import):
    seen = []
    on_import.when_imported("json", seen.append)
    assert seen == [sys.modules["json"]]


def test_a_module_imported_later_is_called_back_after_its_body(on_import, package):
    seen = []
    on_import.when_imported("slow_body", lambda module: seen.append(module.DONE))
    package._slow_body_release.set()
    import slow_body  # noqa: F401
    assert seen == [True]


def test_a_module_half_imported_by_another_thread_is_caught_up_with(on_import, package):
    seen = []
    importer = threading.Thread(target=importlib.import_module, args=("slow_body",))
    importer.start()
    try:
        assert package._slow_body_entered.wait(10)
        on_import.when_imported("slow_body", lambda module: seen.append(module.DONE))
        on_import.catch_up()
        assert seen == []  # its body still runs: nothing half-made is handed over
    finally:
        package._slow_body_release.set()
        importer.join(10)
    assert not importer.is_alive()
    on_import.catch_up()
    assert seen == [True]
    on_import.catch_up()
    assert seen == [True]  # once
