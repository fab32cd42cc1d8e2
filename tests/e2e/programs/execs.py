"""Processes that become other programs: a forked child that execs a shell (which starts a
Python grandchild), a subprocess child in which a preexec_fn runs Python before the exec, and a
forked child that execs Python again."""
import os
import subprocess
import sys
import time


def become(argv):
    pid = os.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    return pid


if __name__ == "__main__":
    if sys.argv[1:] in (["again"], ["grandchild"]):
        print(sys.argv[1], os.getpid(), flush=True)
        time.sleep(60)
        sys.exit(0)
    shell = become(["/bin/sh", "-c", '"$0" "$1" grandchild & wait', sys.executable, __file__])
    spawned = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: None).pid
    python = become([sys.executable, __file__, "again"])
    print("execs started", shell, spawned, python, flush=True)
    time.sleep(60)
