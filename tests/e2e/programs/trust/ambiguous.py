"""Files that share a name: two work.py of the program's own, and its tasks.py beside the
standard library's asyncio/tasks.py."""
import asyncio
import sys

import tasks
from jobs.a import work as work_a
from jobs.b import work as work_b
from wait_go import wait_for

print("imported, waiting", flush=True)  # both work.py are loaded from here on
wait_for(sys.argv[1])
print("tasks %d" % asyncio.run(tasks.run(1)), flush=True)
print("a %d b %d" % (work_a.step(1), work_b.step(2)), flush=True)
print("ambiguous done", flush=True)
