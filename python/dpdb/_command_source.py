"""The program of `python -c CODE` as pdb reads a file.

CPython compiles that program under the file name "<string>", which names no file: pdb could
not list it, `b 5` at its prompt said "End of file" and a breakpoint `<string>:5` "does not
exist" (bdb checks each breakpoint's line in linecache). At start-up of a `-c` process, its
source goes into linecache under that name (3.13 puts it there itself). A breakpoint spec
written `<string>:LINE` then means the lines of the `-c` program, as pdb shows them
("<string>(5)<module>()"). Code other libraries compile from strings under the same name
(dataclasses' and namedtuple's generated methods) is "<string>" too, and stops at the same line
numbers when its lines run.
"""

import linecache
import os
import re
import sys

NAME = "<string>"
# Interpreter options that take their value as the next argument (`-W ignore`, `-X dev`).
_VALUED = ("-W", "-X", "--check-hash-based-pycs")
_COMMAND = re.compile(r"-[A-Za-z]*c")


def register():
    """Puts a `-c` program's source in linecache; nothing for any other program."""
    if sys.argv[:1] != ["-c"] or linecache.getlines(NAME):
        return
    code = _command(_interpreter_argv())
    if code is not None:
        linecache.cache[NAME] = (len(code), None, code.splitlines(True), NAME)


def _interpreter_argv():
    argv = getattr(sys, "orig_argv", None)  # 3.10 and later
    if argv is None:
        try:
            with open("/proc/self/cmdline", "rb") as cmdline:
                argv = [os.fsdecode(arg) for arg in cmdline.read().split(b"\0")[:-1]]
        except OSError:
            return []
    return argv


def _command(argv):
    """The CODE of `python [options] -c CODE …`, or None."""
    index = 1
    while index < len(argv) - 1:
        arg = argv[index]
        if arg in _VALUED:
            index += 2
            continue
        if _COMMAND.fullmatch(arg):
            return argv[index + 1]
        index += 1
    return None
