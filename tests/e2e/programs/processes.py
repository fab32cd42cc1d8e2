"""One Python process started by another, in the way named by argv[1]; the new process stops at a
breakpoint(). Every process says who it is, so a test can follow the chain of parents."""

import concurrent.futures
import multiprocessing
import os
import subprocess
import sys


def say(line):
    # One write per line: the dpdb client's own notices never split it.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def stop_here(label):
    marker = "stopped in " + label
    breakpoint()
    return marker


def child(label):
    say("child %s pid %d ppid %d" % (label, os.getpid(), os.getppid()))
    stop_here(label)
    say("child %s done" % label)
    return label


def by_fork():
    pid = os.fork()
    if pid == 0:
        child("fork")
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status


def by_multiprocessing(method):
    context = multiprocessing.get_context(method)
    process = context.Process(target=child, args=("mp-" + method,))
    process.start()
    process.join()
    return process.exitcode


def by_subprocess():
    return subprocess.run([sys.executable, os.path.abspath(__file__), "as-subprocess"]).returncode


def by_pool():
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:
        return pool.submit(child, "pool").result()


def by_daemon():
    # The classic double fork: the daemon is in a session of its own, has no terminal and no
    # stdin, and its parent is gone. It reports through a pipe; EOF says it has finished.
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        os.setsid()
        up_reader, up_writer = os.pipe()
        if os.fork() != 0:
            # Leaves once the daemon is up, so that the daemon was born its child (its ppid is
            # this process, not whichever adopted it).
            os.close(up_writer)
            os.read(up_reader, 1)
            say("intermediate pid %d ppid %d" % (os.getpid(), os.getppid()))
            os._exit(0)
        os.close(up_reader)
        os.write(up_writer, b"u")
        os.close(up_writer)
        os.close(0)
        sys.stdin = None
        child("daemon")
        os.write(writer, b"daemon finished\n")
        os._exit(0)
    os.close(writer)
    os.waitpid(pid, 0)
    with os.fdopen(reader, "rb") as pipe:
        return pipe.read().decode().strip()


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "as-subprocess":
        child("subprocess")
        sys.exit(0)
    say("main pid %d" % os.getpid())
    if kind == "fork":
        outcome = by_fork()
    elif kind.startswith("mp-"):
        outcome = by_multiprocessing(kind[3:])
    elif kind == "subprocess":
        outcome = by_subprocess()
    elif kind == "pool":
        outcome = by_pool()
    elif kind == "daemon":
        outcome = by_daemon()
    else:
        raise SystemExit("unknown kind " + kind)
    say("main done: %s" % (outcome,))
