"""Imports debugpy's server as ipykernel does (which replaces sys.breakpointhook with debugpy's,
a hook that returns at once while no IDE is connected), optionally listens, then breakpoint()."""

import sys

import debugpy
from debugpy.server import api  # noqa: F401  (what ipykernel imports for its debugger)

if "listen" in sys.argv:
    debugpy.listen(("127.0.0.1", 0))
print("hook replaced", sys.breakpointhook is not sys.__breakpointhook__)
value = 42
breakpoint()
print("after the breakpoint", value * 2)
