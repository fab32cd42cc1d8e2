"""ctrl_c_loop.py's loop, with its Ctrl-C at the worst moment: `q` has closed the session and the
main thread is still on its way out of it (the program sends itself SIGINT right after dpdb's
session console closes; a press once came there in CI)."""

import os
import runpy
import signal

from dpdb import _console

_close = _console.SessionConsole.close


def close_then_interrupt(console, reason):
    _close(console, reason)
    if reason.startswith("quit"):
        os.kill(os.getpid(), signal.SIGINT)


_console.SessionConsole.close = close_then_interrupt
runpy.run_path(os.path.join(os.path.dirname(__file__), "ctrl_c_loop.py"), run_name="__main__")
