"""The terminal's Ctrl-C under `dpdb run`.

While no prompt is shown, Ctrl-C pauses the program at its next line (as pdb does while it runs a
program) instead of interrupting it. It goes to the program as it would without dpdb (Python's
KeyboardInterrupt, so a loop ends, a server stops) when the user said `q` for the process, or
when it is pressed again within a short time while the first one's pause has not opened a
session yet (the main thread waits in C: a sleep, an accept). The terminal sends SIGINT to every
process of the job: the program's own first process takes it so, the processes below it leave
the signal alone rather than die of it. A handler the program installs itself takes precedence.

Django's autoreloader (`runserver`) runs the server in a child and waits for it in os.waitpid,
where no pause can land: the child that serves takes Ctrl-C as the first process would, and the
reloader leaves it to the child (it never arms a pause, which a later SIGTERM would meet in
Django's handler).
"""

import os
import signal
import sys
import time

import dpdb
from dpdb import _console

# A second Ctrl-C within this many seconds of a first one that has not paused yet is the
# program's.
SECOND_PRESS_SECONDS = 2.0
HEADER = ("Program interrupted by Ctrl-C. (Use 'c' to resume; after 'q', Ctrl-C goes to the "
          "program.)")
# Said at once: the pause lands at the program's next line, which may be a while away (the main
# thread waits in C), and until then the terminal would show nothing.
PRESSED = (b"dpdb: pausing at the program's next line (Ctrl-C again within 2 s goes to the "
           b"program)\n")

# (monotonic time, main-thread sessions opened then, the debugger armed) of the last Ctrl-C that
# asked for a pause.
_last_press = None


# True while a SIGINT sent by `interrupt` (_interrupting) is on its way: it is the program's.
_to_the_program = False


def to_the_program_once():
    """The next SIGINT goes to the program as it would without dpdb."""
    global _to_the_program
    _to_the_program = True


# Set by Django's autoreloader in the environment of the child that serves.
_DJANGO_RELOADER_CHILD = ("RUN_MAIN", "true")


def install():
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return
    run = os.environ.get("DPDB_RUN_PID")
    if run != str(os.getppid()) and not (_is_django_reloader_child() and
                                          run == _parent_of(os.getppid())):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        return
    signal.signal(signal.SIGINT, _pause)


def _is_django_reloader_child():
    name, value = _DJANGO_RELOADER_CHILD
    return os.environ.get(name) == value


def _parent_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rpartition(")")[2].split()[1]
    except (OSError, IndexError):
        return None


def _in_django_reloader(frame):
    """Whether the main thread waits in Django's autoreloader for the child that serves."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "restart_with_reloader" and code.co_filename.endswith(
                os.path.join("django", "utils", "autoreload.py")):
            return True
        frame = frame.f_back
    return False


def _pause(signum, frame):
    _press(frame)


def _press(frame, debugger=None):
    """Ctrl-C at `frame`; `debugger`: the one whose session the main thread just left there."""
    # Nothing here may import or call into code outside dpdb's: a first Ctrl-C's pause, armed
    # already, would stop in it.
    global _last_press, _to_the_program
    if _to_the_program:  # `interrupt` in the view of the waiting main thread
        _to_the_program = False
        signal.default_int_handler(signal.SIGINT, frame)
    if _console.in_a_session() or _in_django_reloader(frame):
        # Paused already: the client takes Ctrl-C (it interrupts a command that runs, or comes
        # back to a session the user detached from). Or the child Django's reloader waits for
        # takes it.
        return
    debugging = sys.modules.get("dpdb._debugger")  # not loaded yet: nobody said `q`
    if debugger is None and debugging is not None and debugging.when_left(frame, _press):
        return  # `c` or `q` closed the session, the thread still leaves it
    now = time.monotonic()
    opened = _console.main_thread_sessions_opened()
    waiting = _last_press is not None and _last_press[1] == opened
    unlanded = waiting and now - _last_press[0] < SECOND_PRESS_SECONDS
    if unlanded:
        # The first one's pause would stop at the KeyboardInterrupt on its way out.
        withdraw = getattr(_last_press[2], "withdraw", None)
        if withdraw is not None:
            withdraw()
    if (debugging is not None and debugging.stopped_debugging()) or unlanded:
        _last_press = None
        signal.default_int_handler(signal.SIGINT, frame)
    if waiting:
        # A later press while the pause still waits: it stays armed (arming again would run
        # code where it stops), and a press soon after this one goes to the program.
        _last_press = (now, opened, _last_press[2])
    else:
        # A second press that comes while this handler still arms the pause (handlers run
        # between bytecodes, this one's too) finds this mark.
        _last_press = (now, opened, None)
        _last_press = (now, opened, dpdb._set_trace_at(frame, HEADER, debugger=debugger))
    try:
        os.write(2, PRESSED)
    except OSError:
        pass  # no stderr: the pause comes all the same


# What `q` adds to its notice in a process whose Ctrl-C this handler has.
_pause.after_quit = " (Ctrl-C in its terminal now goes to it)"
_pause.to_the_program_once = to_the_program_once
