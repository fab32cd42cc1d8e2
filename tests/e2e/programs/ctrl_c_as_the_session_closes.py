"""ctrl_c_loop.py's loop, with a Ctrl-C at the worst moment: `q` or `c` (the first argument:
"quit" or "continued") has closed the session and the main thread is still on its way out of it
(the program sends itself SIGINT right after dpdb's session console closes for that reason; a
press once came there in CI). The second argument is the loop's."""

import os
import runpy
import signal
import sys

from dpdb import _console

closing = sys.argv.pop(1)
_close = _console.SessionConsole.close


def close_then_interrupt(console, reason):
    _close(console, reason)
    if reason.startswith(closing):
        os.kill(os.getpid(), signal.SIGINT)


_console.SessionConsole.close = close_then_interrupt
runpy.run_path(os.path.join(os.path.dirname(__file__), "ctrl_c_loop.py"), run_name="__main__")
