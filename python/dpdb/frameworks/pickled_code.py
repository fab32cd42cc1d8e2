"""Functions sent by value keep the name of their file.

Ray, Dask and joblib/loky send a task's function by value: cloudpickle pickles its code object
and the worker makes it anew (code.__new__), with no module of the file behind it. From 3.1 on,
cloudpickle writes "<dynamic-code>" for the code's file name instead of the real one (so that
its payload does not depend on where the function was defined), and the worker's code no longer
says which file it came from: a breakpoint `FILE:LINE` cannot find it, pdb shows
"<dynamic-code>(10)share()" and cannot list its source. In a process that carries the agent,
the code cloudpickle pickles keeps its file name, as cloudpickle before 3.1 kept it: the
processes that unpickle it (with the agent or not) see the real file. The payload is then as
deterministic as before 3.1: the same function from the same file pickles the same.

The code pickled is the user's: on 3.11 a function holding a breakpoint runs a patched copy of
its code (the engine's swap mode), which would take the engine's checks to a process that may not
have dpdb; the copy is pickled as the code it was made from.

Applies to cloudpickle from PyPI and to the copies Ray and older joblib carry. DPDB_CLOUDPICKLE=off
leaves cloudpickle as it is.
"""

import os
import types

from dpdb import _on_import

_MODULES = ("cloudpickle.cloudpickle", "ray.cloudpickle.cloudpickle",
            "joblib.externals.cloudpickle.cloudpickle")
_PLACEHOLDER = "<dynamic-code>"


def keep_file_names():
    """At start-up of a process that carries the agent."""
    if os.environ.get("DPDB_CLOUDPICKLE", "on") == "off":
        return
    for name in _MODULES:
        _on_import.when_imported(name, _keep_file_names)


def _keep_file_names(module):
    # The pickler finds the reducer of code objects in its class's dispatch table.
    table = getattr(getattr(module, "Pickler", None), "_dispatch_table", None)
    reduce = table.get(types.CodeType) if isinstance(table, dict) else None
    if reduce is None or getattr(reduce, "_dpdb_keeps_file_names", False):
        return

    def code_reduce(code):
        made = reduce(_user_code(code))
        constructor, args = made[0], made[1]
        if code.co_filename == _PLACEHOLDER or _PLACEHOLDER not in args:
            return made
        args = list(args)
        args[args.index(_PLACEHOLDER)] = code.co_filename
        return (constructor, tuple(args)) + tuple(made[2:])

    code_reduce._dpdb_keeps_file_names = True
    table[types.CodeType] = code_reduce


def _user_code(code):
    try:
        from dpdb import _engine_native
    except ImportError:  # no engine for this interpreter: no copies either
        return code
    return _engine_native.user_code(code)
