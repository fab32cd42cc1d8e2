"""Parity: the same pdb command script, run under the interpreter's own pdb.Pdb and under
class P(NativeEngineMixin, pdb.Pdb), must print the same stops, the same values, the same output.

Each scenario runs with DPDB_ENGINE=native (the C++ engine), DPDB_ENGINE=nocond (the engine
leaving breakpoint conditions to bdb), DPDB_ENGINE=condpy (every condition called as Python, hits
written at every hit), DPDB_ENGINE=bdb (the fallback) and,
on 3.12+, DPDB_ENGINE=noscan (native without 3.12's scan mode) and DPDB_ENGINE=nosuper (native
without putting 3.12's superinstructions back); on 3.9-3.11, DPDB_ENGINE=noswap
(native without 3.11's swap mode), DPDB_ENGINE=gate (the C tracer behind the PEP 523 gate, no
breakpoint checks in the bytecode) and DPDB_ENGINE=tracer (the C tracer alone). Each runs with and
without a Python audit hook: switching a trace function raises an audit event, whose hook then
runs Python code in the middle of the engine's own switch (on 3.9-3.11 that once killed the
program at its first `c`).
"""
import re
import sys

import pytest

from conftest import native_import_error, run_driver

SCENARIOS = {
    "basic": ("basic.py", ["n", "s", "n", "n", "b helper.py:2", "c", "w", "p v", "c", "c"]),
    "breakpoints": ("bps.py", [
        "b 5, a == 3", "c", "p a, b", "ignore 1 2", "c", "p a, b",
        "tbreak helper.py:3", "c", "p doubled", "disable 1", "b add", "c", "p a, b",
        "enable 1", "condition 1 a == 10", "c", "p a, b", "cl 1", "b", "commands 3", "silent",
        "p 'in add', a, b", "cont", "end", "c", "c",
    ]),
    "function_breakpoint": ("bps.py", [
        "b helper.twice", "c", "p v", "bt", "c", "cl 1", "c",
    ]),
    # A function breakpoint stops at the first line bdb sees the function run, which it learns
    # then: the engine asks bdb what it learned, and lets only that line through.
    "function_breakpoint_learned": ("funcbp.py", [
        "b spin", "b loop_first", "c", "p n", "n", "c", "p n", "c", "p n", "c", "p n", "c",
        "p n", "cl", "y", "c",
    ]),
    # Set while a frame of the function runs: bdb learns the next line that frame runs.
    "function_breakpoint_mid_call": ("funcbp.py", [
        "b 4", "c", "b spin", "cl 1", "c", "p i, total", "c", "p n", "c", "p n", "cl", "y",
        "c",
    ]),
    "stepping": ("stepping.py", [
        "s", "s", "n", "n", "s", "display w", "n", "n", "n", "retval", "n", "unt", "unt", "unt",
        "n", "u", "p n", "d", "n", "r", "p retval", "n", "n", "s", "n", "n", "n", "n", "n",
        "n", "n", "n", "n", "c",
    ]),
    "until_and_jump": ("stepping.py", [
        "n", "j 20", "n", "p a", "n", "n", "until 24", "p b, k", "j 22", "n", "n", "p b",
        "n", "n", "n", "c",
    ]),
    "return_from_nested": ("stepping.py", [
        "b inner", "c", "r", "r", "r", "n", "n", "s", "r", "c", "c", "c",
    ]),
    "exceptions_stepping": ("exceptions.py", ["s"] * 60 + ["c"]),
    "exceptions_next_return": ("exceptions.py", [
        "n", "n", "s", "n", "s", "n", "n", "r", "n", "n", "s", "s", "n", "r", "n", "n", "n",
        "c",
    ]),
    "generators_stepping": ("generators.py", ["s"] * 70 + ["c"]),
    "generators_next_return": ("generators.py", [
        "s", "n", "s", "n", "n", "n", "n", "r", "n", "n", "n", "b helper.py:13", "c", "p i",
        "n", "n", "r", "c", "c", "c", "c", "c",
    ]),
    # Breakpoints on a `yield` line: stops at each value, stepping across the yield into the
    # consumer and back, a condition, an ignore count.
    "yield_line": ("generators.py", [
        "b helper.py:14", "c", "p i", "n", "n", "n", "p sq", "c", "p i", "s", "s", "s", "s",
        "cl 1", "b helper.py:14, i == 2", "c", "p i", "n", "n", "cl 2", "b helper.py:14",
        "ignore 3 1", "c", "p i", "c", "p i", "cl", "y", "c",
    ]),
    "coroutines": ("coroutines.py", [
        "b fetch", "b 14", "c", "n", "n", "p i", "c", "p r", "n", "n", "r", "cl 1", "c",
        "cl 2", "c",
    ]),
    "coroutines_stepping": ("coroutines.py", ["s"] * 50 + ["c"]),
    "recursion": ("recursion.py", [
        "b fact, n == 2", "c", "w", "p n", "u", "p n", "d", "r", "n", "n", "p sub",
        "b helper.py:9, n == 2", "ignore 2 3", "c", "p n", "bt", "r", "cl", "y", "c",
    ]),
    "threads": ("threads.py", [
        "n", "n", "n", "p tag, acc", "c", "n", "until 9", "p acc", "c",
    ]),
    # Breakpoints in code that starts after they were set: on 3.9-3.11 the native strategy runs
    # it from a copy with the check compiled into the bytecode.
    "compiled_conditions": ("hotbp.py", [
        "b 7, i == 2", "c", "p i, total", "tbreak 8", "c", "p i, sq", "b 8", "ignore 3 2", "c",
        "p i, total", "c", "p i, total", "cl 1", "cl 3", "c",
    ]),
    "compiled_commands": ("hotbp.py", [
        "b 8", "commands 1", "silent", "p 'sum', total", "cont", "end", "b 25", "c", "p x, acc",
        "c", "p x, acc", "cl 2", "c",
    ]),
    "compiled_clear_disable": ("hotbp.py", [
        "b 8", "c", "p i", "cl 1", "b 7", "c", "p i", "disable 2", "b 40", "c", "p n",
        "enable 2", "cl 3", "c",
    ]),
    "compiled_jump": ("hotbp.py", [
        "b 8", "c", "p i, total", "j 7", "n", "p sq", "n", "p total", "n", "n", "p i, total",
        "cl 1", "b 7", "b 8", "c", "p i", "j 8", "c", "p i, total", "cl 2", "cl 3", "c",
    ]),
    # 3.12+: lines with a condition run in a fast copy (engine/fast_copy.hpp): a stop at one, a
    # step onto one, a jump onto one, from code the program derived from a copy.
    "fast_copy_jump": ("hotbp.py", [
        "b 8, i >= 0", "c", "p i, total", "j 7", "n", "p sq", "n", "p total", "n", "n",
        "p i, total", "cl 1", "b 7, i > 1", "b 8, i > 1", "c", "p i", "j 8", "c", "p i, total",
        "cl 2", "cl 3", "c",
    ]),
    "fast_copy_stepping": ("hotbp.py", [
        "b 8, i == 1", "c", "s", "s", "s", "n", "r", "n", "s", "c", "p i", "cl 1", "n", "n", "c",
    ]),
    "fast_copy_code_replace": ("swap_replace.py", [
        "b swapmod.py:4, i >= 0", "c", "p i", "c", "p i", "c", "p i", "c", "p i", "cl", "y", "c",
    ]),
    "fast_copy_refused": ("refuse_code.py", [
        "b 14, i == 3", "c", "p i, total", "c",
    ]),
    "compiled_stepping": ("hotbp.py", [
        "b 8", "c", "s", "s", "s", "n", "r", "n", "s", "c", "p i", "cl 1", "n", "n", "c",
    ]),
    "compiled_with_try": ("hotbp.py", [
        "b 25", "c", "p x", "n", "n", "n", "c", "p x, acc", "n", "n", "n", "n", "cl 1", "c",
    ]),
    "compiled_with_raise": ("hotbp.py", [
        "b 25", "b 27", "c", "c", "p x", "c", "p x, acc", "cl 1", "cl 2", "c",
    ]),
    "compiled_exception": ("hotbp.py", [
        "b 33", "c", "p v", "n", "n", "n", "n", "n", "cl 1", "b 33", "c", "p v", "c",
    ]),
    "compiled_recursion": ("hotbp.py", [
        "b 40, n == 2", "c", "w", "p n", "u", "p n", "c", "b 40", "c", "p n", "r", "c", "p n",
        "cl", "y", "c",
    ]),
    "compiled_suspended": ("hotbp.py", [
        "b 45", "b 58", "c", "p i", "c", "p i", "n", "n", "p got", "cl 1", "c", "p i, total",
        "n", "n", "n", "c", "p i, total", "cl 2", "c",
    ]),
    "compiled_loop_header": ("hotbp.py", [
        "b 6", "c", "c", "p i", "b 9", "c", "p total", "cl", "y", "c",
    ]),
    # A breakpoint on a `for` header: the end of the body and every `continue` jump back into
    # the middle of the line, where the interpreter reports it again (on 3.9-3.11 the jump
    # itself gets the check).
    "for_header": ("forheader.py", [
        "b 15", "c", "p i", "c", "p i, total, skipped", "n", "n", "s", "n", "n", "n", "c",
        "p i, total", "cl 1", "c",
    ]),
    "for_header_condition": ("forheader.py", [
        "b 15, locals().get('i') == 2", "c", "p i, total, skipped", "n", "n", "n", "n", "n",
        "c", "p i, total", "cl 1", "c",
    ]),
    "for_header_multiline": ("forheader.py", [
        "b 25", "c", "p dist", "c", "p x1, x2, dist", "n", "n", "n", "p dx", "s", "s", "c",
        "p m1, m2", "cl 1", "b 25, locals().get('m2') == 4.0", "c", "p m1, m2, dist", "s", "s",
        "n", "c", "p m1, m2", "cl", "y", "c",
    ]),
    "for_header_caught": ("forheader.py", [
        "b 34", "c", "c", "c", "c", "p k, log", "n", "n", "n", "n", "n", "n", "n", "c",
        "p k, log", "cl 1", "b 34, locals().get('k') == 2", "c", "p k, log", "cl", "y", "c",
    ]),
    "for_header_nested": ("forheader.py", [
        "b 8", "b 7", "c", "c", "c", "c", "p i, j", "cl 1", "c", "p i, j", "c", "p i", "cl",
        "y", "b 2", "c", "c", "p i", "c", "cl", "y", "c",
    ]),
    # nbody's advance(): the jump at the header's start covers its FOR_ITER, which the tail runs.
    "for_header_wide": ("forheader.py", [
        "b 57", "c", "c", "c", "c", "p i, dx", "n", "n", "s", "n", "cl 1",
        "b 57, locals().get('m2') == 3.0", "c", "p i, m1, m2", "n", "c", "p i, m1, m2", "s",
        "n", "n", "cl", "y", "b 71", "c", "p i", "c", "c", "c", "p i, m", "cl", "y", "c",
    ]),
    # `j` from a stop a jump site delivered (the frame resumed at FOR_ITER, or in the tail).
    "for_header_jump": ("forheader.py", [
        "b 15", "c", "c", "c", "p i", "j 16", "n", "p i", "n", "c", "p i", "j 19", "n", "n",
        "p total", "cl", "y", "b 57", "c", "c", "c", "p i, dx", "j 58", "n", "n", "p dx", "cl",
        "y", "c",
    ]),
    "while_continue": ("forheader.py", [
        "b 46", "c", "c", "c", "p n, steps", "n", "n", "n", "n", "c", "p n, steps", "cl", "y",
        "c",
    ]),
    # Breakpoints in other modules (3.11 native: "swap mode", the functions themselves run the
    # patched code): imported before, a closure made after, a method, a module imported after
    # (through the audit hook), a breakpoint cleared and set again.
    "swap_modules": ("swap.py", [
        "b swapmod.py:4", "b swapmod.py:10", "b swapmod.py:21", "b swaplate.py:2", "c", "p i",
        "cl 1", "c", "p x, n", "c", "p self.v", "c", "p x", "b swapmod.py:4", "c", "p i", "c",
        "p i", "cl", "y", "c",
    ]),
    # A generator suspended before its breakpoint was set: the gate serves it.
    "swap_suspended_generator": ("swap_gen.py", [
        "b swapmod.py:27", "c", "p i", "c", "p i", "cl 1", "c", "b swapmod.py:4", "c", "p i",
        "cl", "y", "c",
    ]),
    # Code made by the program from a function's __code__ while it runs a patched copy.
    "swap_code_replace": ("swap_replace.py", [
        "b swapmod.py:4", "c", "p i", "c", "p i", "c", "p i", "c", "p i", "cl", "y", "c",
    ]),
    # 3.12: superinstructions put back in code that had events (DPDB_ENGINE=nosuper leaves them
    # out); a breakpoint set later, a step and a jump still see the lines they start.
    "superinstructions": ("superinstructions.py", [
        "b superpair.py:16", "c", "b superpair.py:9", "c", "p x", "n", "p y", "j 9", "n", "p y",
        "c", "p a", "c", "c",
        "cl", "y", "c",
    ]),
    # Conditions the engine evaluates in the frame (DPDB_ENGINE=nocond leaves them to bdb): `b`
    # lists the hit counts, which bdb counts for every enabled breakpoint, true condition or not.
    "condition_true": ("conditions.py", [
        "b 8, i == 3", "c", "p i, total", "b", "c", "p i, total", "b", "cl", "y", "c",
    ]),
    "condition_never_true": ("conditions.py", [
        "b 8, i < 0", "b 17", "c", "p k", "b", "cl", "y", "c",
    ]),
    # `==` between objects that compare by identity and a number (answered in C), and one whose
    # __eq__ says True (Python's): only that one stops, as under bdb.
    "condition_identity": ("identity.py", [
        "b 15, item == -1", "c", "p type(item).__name__, seen", "b", "cl", "y", "c",
    ]),
    "condition_raising": ("conditions.py", [
        "b 8, undefined > 1", "c", "p i", "b", "c", "p i", "cl", "y", "c",
    ]),
    "condition_changed_and_cleared": ("conditions.py", [
        "b 8, i == 1", "c", "p i", "condition 1 i == 4", "c", "p i", "condition 1", "c", "p i",
        "b", "cl", "y", "c",
    ]),
    "condition_ignore": ("conditions.py", [
        "b 8, i % 2 == 0", "ignore 1 2", "c", "p i", "b", "c", "p i", "b", "cl", "y", "c",
    ]),
    "condition_tbreak": ("conditions.py", [
        "tbreak 8, i == 4", "b 17, k == 3", "c", "p i", "b", "c", "p k", "b", "cl", "y", "c",
    ]),
    "condition_same_line": ("conditions.py", [
        "b 8, i < 0", "b 8, i == 2", "c", "p i", "b", "disable 2", "b 17", "c", "b", "cl", "y",
        "c",
    ]),
    # Each hit evaluates the condition once: it stops at the third hit, and counts 10 in all.
    "condition_side_effect": ("conditions.py", [
        "b 8, __import__('ticker').tick()", "c", "p i, __import__('ticker').ticks", "b", "c",
    ]),
    # Conditions the engine answers in C (comparisons, `is`, `and`/`or`/`not`, a global) with
    # the hits of false ones counted in C: a comparison that raises there (a str against an int)
    # stops as in Python; `b` lists the hits counted meanwhile, also after `condition` changed.
    "condition_compared_in_c": ("conditions.py", [
        "b 8, i < 'a'", "c", "p i", "cl 1", "b 8, 0 < i < 0 or i is None",
        "b 8, not (i != 4) and limit > -1", "c", "p i", "b", "condition 2 i == 1",
        "condition 3 i == 9", "c", "p i", "b", "b 29, step == shadow",
        "b 36, n is not None and n >= 4", "c", "p n", "b", "cl", "y", "c",
    ]),
    # Breakpoints without a condition whose ignore count runs, counted down by the engine (a
    # temporary one among them, and `ignore` changed while a count runs), as bdb does.
    "ignore_plain": ("conditions.py", [
        "b 8", "ignore 1 3", "tbreak 17", "ignore 2 2", "c", "p i", "b", "c", "p i", "b",
        "ignore 1 4", "c", "p i", "b", "ignore 1 0", "c", "p k", "b", "cl", "y", "c",
    ]),
    # Conditions that read no variable, answered once for every hit (never true, always true),
    # and one changed to a comparison of constants that raises (stops at every hit, as in Python).
    "condition_constant": ("conditions.py", [
        "b 8, 0 > 1", "b 8, False or None", "b 17, 1 < 2 < 3", "c", "p k", "b", "c", "p k",
        "condition 3 'a' < 1", "c", "p k", "b", "cl", "y", "c",
    ]),
    "condition_ignore_in_c": ("conditions.py", [
        "b 8, 1 < i", "ignore 1 2", "c", "p i", "b", "c", "p i", "b", "cl", "y", "c",
    ]),
    # Closure variables (cells, and an argument that is a cell), a local still unbound (bdb's
    # f_locals leaves it out: the global of that name answers), a module body's loop.
    "condition_variables": ("conditions.py", [
        "b 17, k == 2 and limit == 2", "b 29, step == 3 and j == 2", "b 36, shadow > 2",
        "b 51, m == 4", "c", "p k, limit", "c", "p j, step", "c", "p n", "c", "p n", "c",
        "p m, count", "b", "cl", "y", "c",
    ]),
    # A generator expression does not see the frame's variables (only its first iterable does),
    # a list comprehension does from 3.12 on: whatever pdb makes of it, so must the engine.
    "condition_scopes": ("conditions.py", [
        "b 8, any(v > i for v in range(n))", "b 29, [v for v in range(j) if v > step - 2]", "c",
        "p i", "b", "cl 1", "c", "p j", "b", "cl", "y", "c",
    ]),
    # A breakpoint set while stopped, at a line of a caller that already runs (its frame started
    # under the gate, which only sees frames as they start or resume).
    "caller_running": ("caller_bp.py", [
        "b work", "c", "p n", "b 8", "cl 1", "c", "p n", "c", "p n", "cl", "y", "c",
    ]),
    "caller_running_kept": ("caller_bp.py", [
        "b work", "c", "p n", "b 8", "c", "p n", "c", "p n", "c", "p n", "cl", "y", "c",
    ]),
    # Conditions in each kind of code whose line the engine once left to line events (a `while`
    # and a `for` header, comprehensions, generator expressions, generators and coroutines, a
    # multi-line call, a closure made per call): stops, ignore counts, raising conditions (a
    # genexpr's name unbound in the frame around it), `j`, stepping, commands, hit counts.
    "condition_kinds_loops": ("kinds.py", [
        "b 8, i > 1", "ignore 1 2", "b 89", "c", "p i, total", "n", "n", "n", "p i",
        "condition 1 i < 0", "b 40, total == 3", "b 46, n < 0", "c", "p item, total", "j 41",
        "n", "p item, total", "c", "b", "cl", "y", "c",
    ]),
    "condition_kinds_generators": ("kinds.py", [
        "b 23, v == 3", "b 27, depth == 2", "b 33, depth == 1", "b 89", "c",
        "p scale", "c", "p v, scale", "c", "p v, scale", "c", "p depth", "n", "n", "p depth", "c",
        "p depth", "c", "b", "cl", "y", "c",
    ]),
    # A generator expression made anew at each run of its line, whose start shares its line (3.13
    # once lost the line's event with the start's DISABLE in the second and later ones).
    "condition_kinds_genexpr_again": ("kinds.py", [
        "b 17, limit < 0", "b 82", "c", "b", "cl", "y", "c",
    ]),
    "condition_kinds_calls": ("kinds.py", [
        "b 56, i == 2", "commands 1", "silent", "p 'multi', i, total", "end", "b 66, n == 2",
        "b 89", "c", "c", "c", "p x, n", "c", "b", "cl", "y", "c",
    ]),
    # Breakpoints on the lines of one-line functions (each line is also the function's start;
    # 3.13 once stopped there only once) and conditions there:
    # true sometimes, stepping out of them, an ignore count, raising (a name unbound), commands.
    "one_line_functions_every_call": ("onelinedef.py", [
        "b onelinemod.py:1", "b onelinemod.py:5", "c", "p x", "c", "p v", "c", "p x", "cl 2",
        "c", "p x", "cl", "y", "c",
    ]),
    "condition_one_line_functions": ("onelinedef.py", [
        "b onelinemod.py:1, x == 3", "b onelinemod.py:7, self.v > 3", "c", "p x", "n", "n",
        "n", "p total", "c", "p self.v", "ignore 2 1", "c", "p self.v", "cl 1",
        "b onelinemod.py:5, unbound > 0", "c", "p v", "cl 3", "commands 2", "silent",
        "p 'doubled', self.v", "cont", "c",
    ]),
    # Stepping into a one-line function with a conditional breakpoint after its false calls
    # (3.13: a fast copy's start answers DISABLE, its line's event comes from the tail), then
    # through it, then to its true call.
    "condition_one_line_step_in": ("onelinedef.py", [
        "b onelinemod.py:1, x == 6", "b 10, i == 4", "c", "p i", "s", "s", "p x", "s", "s", "s",
        "p x", "s", "c", "p x", "b", "cl", "y", "c",
    ]),
    # Conditions in a function whose exception table needs two-byte offsets (none got a fast
    # copy before), one on a line that raises into its handler while the condition is false.
    "condition_long_code": ("long_code.py", [
        "b 16, i == 3", "b 20, i == 4", "b 22, total < -100", "c", "p i, total", "n", "n",
        "p total", "c", "p i", "n", "n", "p i", "b", "cl", "y", "c",
    ]),
    # Conditions on a `for` header over an attribute, whose per-iteration entry is the FOR_ITER
    # the body jumps back to (a fast copy reports the line in the jump's tail): true sometimes,
    # stepping and `j` from a stop there, never true (hit counts), raising (a name unbound before
    # the first item, a division by zero), an ignore count, a `continue` from another line, a
    # nested loop's headers.
    "condition_for_attribute_true": ("forattr.py", [
        "b 9, total > 5", "b 16, item == 3", "c", "p total", "n", "p item, total", "n", "n",
        "p item, total", "c", "p total", "j 10", "n", "p item, total", "c", "p item, total",
        "s", "s", "p item, total", "b", "c", "p item, total", "b", "cl", "y", "c",
    ]),
    "condition_for_attribute_never": ("forattr.py", [
        "b 9, total < 0", "b 16, total < 0", "b 25, count < 0", "b 26, count < -1",
        "b 33, len(seen) < 0", "b 51", "c", "b", "cl", "y", "c",
    ]),
    # A `continue` in a `try` jumps back from within the handler's range, the header is outside.
    "condition_for_attribute_try": ("forattr.py", [
        "b 33, item == 3", "b 25, count > 0", "c", "p count", "c", "p count", "c", "p item, seen",
        "c", "p item, seen", "n", "n", "p item", "n", "n", "n", "c", "p item, seen", "b", "cl",
        "y", "c",
    ]),
    "condition_for_attribute_raising": ("forattr.py", [
        "b 9, total // (item - 2) < -100", "b 26, 1 // (item - 4) > 0", "c", "p total", "c",
        "p item, total", "c", "p item, total", "c", "p bag.items, item, count", "c",
        "p item, count", "b", "cl", "y", "c",
    ]),
    "condition_for_attribute_ignore": ("forattr.py", [
        "b 26, count >= 0", "ignore 1 5", "b 16, item > 0", "ignore 2 2", "c",
        "p item, total", "c", "p item, total", "b", "cl 2", "c", "p bag.limit, item, count",
        "ignore 1 3", "c", "p bag.limit, item, count", "b", "cl", "y", "c",
    ]),
    "one_line_loops": ("oneline.py", [
        "s", "s", "n", "b 3", "c", "p i, total", "c", "p i", "cl", "y", "b 4", "c", "p n", "c",
        "p n", "cl", "y", "c",
    ]),
}

# Scenarios where dpdb's engine is known to differ from pdb: (when, in which modes, why). Strict:
# once mended, the scenario fails until taken out of here.
KNOWN_DIFFERENCES = {}

MODES = ["native", "nocond", "condpy", "noguard", "bdb"] + (
    ["noswap", "gate", "tracer"] if sys.version_info < (3, 12) else ["noscan", "nosuper"])


def normalised(output):
    # Object reprs carry addresses that differ from run to run, also where reprlib cut them short.
    output = re.sub(r"0x[0-9a-fA-F]+", "0xADDR", output)
    return re.sub(r"\.\.\.[^\s>]*>", "...>", output)


@pytest.fixture(scope="module")
def reference():
    cache = {}

    def get(name, audit_hook=False):
        if (name, audit_hook) not in cache:
            program, commands = SCENARIOS[name]
            cache[name, audit_hook] = run_driver("pdb", program, commands, audit_hook=audit_hook)
        return cache[name, audit_hook]

    return get


@pytest.mark.parametrize("audit_hook", [False, True], ids=["", "audit_hook"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_parity(name, mode, audit_hook, reference, request):
    if mode != "bdb" and native_import_error():
        pytest.skip("dpdb._engine_native cannot be imported: %s" % native_import_error())
    known, modes, why = KNOWN_DIFFERENCES.get(name, (False, (), ""))
    if known and mode in modes:
        request.applymarker(pytest.mark.xfail(reason=why, strict=True))
    program, commands = SCENARIOS[name]
    want_rc, want = reference(name, audit_hook)
    got_rc, got = run_driver("dpdb", program, commands, engine=mode, audit_hook=audit_hook)
    assert "(Pdb)" in want, want
    assert normalised(got) == normalised(want)
    assert got_rc == want_rc


def test_reference_stops_somewhere(reference):
    # Guard against a scenario that silently stopped exercising the debugger.
    rc, out = reference("stepping")
    assert out.count("(Pdb)") >= 20
