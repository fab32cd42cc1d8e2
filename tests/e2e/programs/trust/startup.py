"""Code that runs the moment it appears: once told to go, the program imports a module and runs
its first line at once, then starts a Python child that does the same right at its start."""
import os
import subprocess
import sys

from wait_go import wait_for

wait_for(sys.argv[1])
import quick  # noqa: E402  (imported only now, on purpose)

print("main got %d" % quick.compute(1), flush=True)
subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "quick_child.py")],
               check=True)
print("startup done", flush=True)
