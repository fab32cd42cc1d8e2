"""A pre-fork server: the master has loaded the handler and forks workers on demand; the test
changes global breakpoints between the forks (files tell the processes when to go on)."""
import os
import sys

from handler import handle
from wait_go import wait_for

folder = sys.argv[1]


def go(name):
    wait_for(os.path.join(folder, name))


go("fork1")
first = os.fork()
if first == 0:
    print("worker 1: %d" % handle(1), flush=True)
    go("again1")
    print("worker 1 again: %d" % handle(3), flush=True)
    os._exit(0)
go("fork2")
second = os.fork()
if second == 0:
    print("worker 2: %d" % handle(2), flush=True)
    os._exit(0)
for pid in (first, second):
    os.waitpid(pid, 0)
print("master: %d" % handle(4), flush=True)
