"""Running dpdb's code against a framework's module the moment that module is imported, before
the program can use it: a class patched then is patched for every instance the program makes."""

import importlib.abc
import importlib.machinery
import sys

# module name -> the callbacks waiting for it (each called once, with the module, after its
# body ran)
_waiting = {}


def when_imported(name, callback):
    """callback(module) once `name` is imported, or now if it is already. A module another
    thread is importing at this moment (its body still running, its loader not ours) is caught
    up with by catch_up()."""
    module = sys.modules.get(name)
    if module is not None and not _initializing(module):
        callback(module)
        return
    _waiting.setdefault(name, []).append(callback)
    if not any(isinstance(finder, _OnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OnImport())


def catch_up():
    """The callbacks of modules whose import ended in another thread since they were waited for
    (called by the control thread once a second, never while a module's body runs in it)."""
    for name in list(_waiting):
        module = sys.modules.get(name)
        if module is not None and not _initializing(module):
            for callback in _waiting.pop(name, ()):
                callback(module)


def _initializing(module):
    # importlib's own mark, set while the module's body runs.
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


class _OnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a module waited for, the spec the path finder gives, whose
    loader runs the callbacks once the module's body has run."""

    def find_spec(self, name, path, target=None):
        if name not in _waiting:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module

            def run_then_call(module):
                run(module)
                for callback in _waiting.pop(name, ()):
                    callback(module)

            spec.loader.exec_module = run_then_call
        return spec
