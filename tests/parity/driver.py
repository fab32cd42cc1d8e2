"""Runs a parity program under one debugger, reading pdb commands from stdin.

usage: driver.py {pdb,dpdb} PROGRAM [ARGS...]

With DPDB_PARITY_AUDIT_HOOK=1 the program runs with a Python audit hook installed, as security
and observability tools and test runners install them (every audit event then runs Python code).

The program calls breakpoint() where debugging starts; each call makes a fresh debugger, as
pdb.set_trace() does. 'pdb' is the interpreter's own pdb.Pdb, 'dpdb' is
class P(NativeEngineMixin, pdb.Pdb) with the strategy from DPDB_ENGINE.
"""
import os
import pdb
import runpy
import sys

# The engine imports threading (it must follow threads started later), and with threading imported
# the interpreter runs threading._shutdown() at exit, where stepping past the end of a program
# stops. Import it under both debuggers so that both run the same code.
import threading  # noqa: F401


def debugger_class(kind):
    if kind == "pdb":
        return pdb.Pdb
    from dpdb._engine import NativeEngineMixin

    class P(NativeEngineMixin, pdb.Pdb):
        pass

    return P


def main():
    kind, program = sys.argv[1], sys.argv[2]
    if os.environ.get("DPDB_PARITY_AUDIT_HOOK") == "1":
        sys.addaudithook(lambda event, args: None)
    cls = debugger_class(kind)

    def hook(*args, **kwargs):
        dbg = cls(stdin=sys.stdin, stdout=sys.stdout)
        dbg.use_rawinput = False
        dbg.set_trace(sys._getframe().f_back)

    sys.breakpointhook = hook
    sys.argv = sys.argv[2:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
