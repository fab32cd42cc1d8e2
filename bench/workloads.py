"""Benchmark workloads. Each hot function holds a line that never runs: the 'same' configurations
put their breakpoint there (marked HOT). The 'cond' configurations put a breakpoint whose
condition (CONDITIONS) is never true on a line that runs (marked COND): for call and loop the line
that runs most."""
import json
import re
import textwrap
from collections import Counter


def unreachable():
    raise AssertionError("benchmark breakpoint line reached")


def fib(n):
    if n < 2:  # COND:call
        return n
    if n < 0:
        unreachable()  # HOT:call
    return fib(n - 1) + fib(n - 2)


def call_heavy(k):
    for _ in range(k):
        fib(18)


def loop_once(n):
    total = 0
    for i in range(n):
        total += i * i % 7  # COND:loop
        if total < 0:
            unreachable()  # HOT:loop
    return total


def loop_heavy(k):
    for _ in range(k):
        loop_once(20000)


_TEXT = ("the quick brown fox jumps over the lazy dog " * 8).strip()
_WORD = re.compile(r"\b(\w)(\w*)\b")


def std_once():
    doc = {"words": _TEXT.split(), "n": 42, "nested": {"a": [1, 2, 3], "b": "x" * 20}}
    back = json.loads(json.dumps(doc))
    counts = Counter(back["words"])
    titled = _WORD.sub(lambda m: m.group(1).upper() + m.group(2), _TEXT)
    wrapped = textwrap.fill(titled, width=40)  # COND:std
    if not counts:
        unreachable()  # HOT:std
    return len(wrapped)


def std_heavy(k):
    for _ in range(k):
        std_once()


WORKLOADS = {"call": call_heavy, "loop": loop_heavy, "std": std_heavy}
# Never true where the COND line of the workload runs.
CONDITIONS = {"call": "n < 0", "loop": "i < 0", "std": "counts is None"}


def marked_line(name, mark="HOT"):
    with open(__file__) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith("# %s:%s" % (mark, name)):
                return number
    raise LookupError(name)
