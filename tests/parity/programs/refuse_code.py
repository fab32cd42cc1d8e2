"""A program whose audit hook refuses every change of a function's __code__: a conditional
breakpoint still stops where pdb stops (3.12+: the function keeps its own code, no fast copy)."""
import sys


def refuse(event, args):
    if event == "object.__setattr__" and args[1] == "__code__":
        raise RuntimeError("no __code__ changes here")


def work(n):
    total = 0
    for i in range(n):
        total += i
    return total


sys.addaudithook(refuse)
breakpoint()
print("work", work(6))
