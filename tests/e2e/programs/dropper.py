"""A server whose workers run as another user, as servers that drop privileges do: one forked
and switched to `nobody` (gunicorn --user, celery --uid), which forks a child of its own as that
user, and one started as `nobody` (a helper program, which carries the environment of the job)."""
import os
import pwd
import subprocess


def exit_code(status):
    return os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8


nobody = pwd.getpwnam("nobody")
helper = subprocess.Popen(["sleep", "5"], user=nobody.pw_uid, cwd="/")
print("helper pid", helper.pid, flush=True)

pid = os.fork()
if pid == 0:
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)
    print("worker uid", os.getuid(), flush=True)
    grandchild = os.fork()
    if grandchild == 0:
        # Forked by `nobody`: the hub's socket is closed to it from the start.
        fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd, 0)
        breakpoint()
        print("grandchild done", flush=True)
        os._exit(0)
    print("grandchild status", exit_code(os.waitpid(grandchild, 0)[1]), flush=True)
    breakpoint()
    print("worker done", flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
helper.kill()
helper.wait()
print("server done, worker status", exit_code(status), flush=True)
