"""Processes that become other programs: a forked child that execs a shell (which starts a
Python grandchild), a subprocess child in which a preexec_fn runs Python before the exec, and a
forked child that execs Python again."""
import os
import subprocess
import sys
import time


def say(*words):
    # One write: processes that print at the same moment must not cut each other's lines (print
    # writes word by word when unbuffered).
    os.write(1, (" ".join(str(word) for word in words) + "\n").encode())


def become(argv):
    pid = os.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    return pid


if __name__ == "__main__":
    if sys.argv[1:] in (["again"], ["grandchild"]):
        say(sys.argv[1], os.getpid())
        time.sleep(60)
        sys.exit(0)
    shell = become(["/bin/sh", "-c", '"$0" "$1" grandchild & wait', sys.executable, __file__])
    spawned = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: None).pid
    python = become([sys.executable, __file__, "again"])
    say("execs started", shell, spawned, python)
    time.sleep(60)
