"""Runs command_body.py's text as `python -c` (as launchers and multiprocessing's spawn run code),
with argv[1] for it; ends with its status."""
import os
import subprocess
import sys

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "command_body.py")) as body:
    code = body.read()
sys.exit(subprocess.call([sys.executable, "-u", "-c", code, sys.argv[1]]))
