"""A main thread in one long C call: no bytecode runs until it returns (minutes)."""
import os

print("busy in C in %d" % os.getpid(), flush=True)
sum(range(10**13))
print("the C call returned", flush=True)
