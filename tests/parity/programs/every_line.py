"""Stdlib code with a never-true conditional breakpoint on almost every line (not on the lines
that start functions or classes: those make bdb test every line of the function). Prints whether
the results match a run without breakpoints, and the engine's counters."""
import argparse
import difflib
import json
import json.decoder
import json.encoder
import pdb
import sys
import textwrap

from dpdb import _engine_native
from dpdb._engine import NativeEngineMixin

MODULES = [json.decoder, json.encoder, textwrap, difflib, argparse]


def workload():
    out = []
    doc = {"a": [1, 2.5, "x", None, True], "b": {"c": "d" * 30}}
    out.append(json.loads(json.dumps(doc, indent=2, sort_keys=True)))
    out.append(textwrap.fill("the quick brown fox " * 20, width=33))
    out.append(list(difflib.unified_diff(["a\n", "b\n", "c\n"], ["a\n", "c\n", "d\n"])))
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--n", type=int, default=3)
    parser.add_argument("rest", nargs="*")
    out.append(vars(parser.parse_args(["--n", "5", "a", "b"])))
    return repr(out)


class Unstoppable(NativeEngineMixin, pdb.Pdb):
    started = False

    def interaction(self, frame, traceback):
        if self.started:
            raise AssertionError("stopped at %s:%d" % (frame.f_code.co_filename, frame.f_lineno))
        self.started = True
        self.set_continue()


def main():
    expected = workload()
    dbg = Unstoppable()
    for module in MODULES:
        with open(module.__file__) as source:
            for number, text in enumerate(source, 1):
                text = text.strip()
                if text and not text.startswith(("#", "def ", "class ", "@", "async def")):
                    dbg.set_break(module.__file__, number, cond="0")
    dbg.set_trace()
    same = workload() == expected
    stats = _engine_native.stats()
    print("same", same, "forwarded", stats["forwarded"], "patched", stats["patched"],
          "trapped", stats["trapped"], "conditions_false", stats["conditions_false"])


main()
