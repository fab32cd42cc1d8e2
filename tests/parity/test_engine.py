"""Behaviour that dpdb adds to pdb (so there is no stock pdb to compare with): breakpoints by path
suffix, breakpoints reaching threads that were started before them, the strategy switch, and the
engine staying out of the way while nothing is armed."""
import os
import sys

import pytest

from conftest import PROGRAMS, native_import_error, run_driver

from dpdb import _engine

LEGACY = sys.version_info < (3, 12)
NATIVE_MODES = ["native"] + (["noswap", "gate", "tracer"] if LEGACY else ["noscan", "nosuper"])
# Strategies that compile breakpoint checks into the bytecode on 3.9-3.11.
PATCHING = ("native", "noswap")
# 3.11's swap mode and 3.12's scan mode: the default strategy only.
SWAP = sys.version_info[:2] == (3, 11)
SCAN = sys.version_info[:2] == (3, 12)
# Strategies with 3.12's scan mode.
SCANNING = ("native", "nosuper")

needs_native = pytest.mark.skipif(
    native_import_error() is not None,
    reason="dpdb._engine_native cannot be imported: %s" % native_import_error())


@pytest.mark.parametrize("mode", ["native", "bdb"])
@pytest.mark.parametrize("spec", ["helper.py", "programs/helper.py", "parity/programs/helper.py"])
def test_breakpoint_by_path_suffix(spec, mode):
    if mode == "native" and native_import_error():
        pytest.skip("dpdb._engine_native cannot be imported")
    rc, out = run_driver("dpdb", "bps.py", ["b %s:2" % spec, "c", "p v", "c", "p v", "cl", "y", "c"],
                         engine=mode)
    helper = os.path.join(PROGRAMS, "helper.py")
    assert "Breakpoint 1 at %s:2" % helper in out
    assert out.count("%s(2)twice()" % helper) == 2
    assert "(Pdb) 0\n" in out and "(Pdb) 1\n" in out
    assert "results 84 30" in out


def test_resolve_breakpoint_file_suffixes():
    import conftest  # a module loaded from tests/parity, so resolvable by suffix

    here = os.path.normcase(os.path.abspath(conftest.__file__))
    assert _engine.resolve_breakpoint_file("parity/conftest.py") == here
    assert _engine.resolve_breakpoint_file("parity/conftest") == here
    assert _engine.resolve_breakpoint_file(here) == here
    assert _engine.resolve_breakpoint_file("no/such/file.py") is None
    assert _engine.resolve_breakpoint_file("") is None


def test_resolve_breakpoint_file_ambiguous(tmp_path, monkeypatch):
    import types

    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "dup_mod.py").write_text("x = 1\n")
        mod = types.ModuleType("dpdb_test_dup_" + sub)
        mod.__file__ = str(tmp_path / sub / "dup_mod.py")
        monkeypatch.setitem(sys.modules, mod.__name__, mod)
    with pytest.raises(ValueError, match="several files"):
        _engine.resolve_breakpoint_file("dup_mod.py")
    assert _engine.resolve_breakpoint_file("a/dup_mod.py") == os.path.normcase(
        str(tmp_path / "a" / "dup_mod.py"))


def test_resolve_breakpoint_arg():
    import conftest

    here = os.path.normcase(os.path.abspath(conftest.__file__))
    assert _engine.resolve_breakpoint_arg("parity/conftest.py:12") == here + ":12"
    assert _engine.resolve_breakpoint_arg("parity/conftest.py:12, x > 1") == here + ":12, x > 1"
    assert _engine.resolve_breakpoint_arg("some_function") == "some_function"
    assert _engine.resolve_breakpoint_arg("42") == "42"
    assert _engine.resolve_breakpoint_arg("nowhere.py:3") == "nowhere.py:3"


@pytest.mark.parametrize("special", ["nocond", "condpy", "noguard", "noswap", "gate", "tracer", "noscan",
                                     "nosuper"])
def test_strategy_switch(monkeypatch, special):
    monkeypatch.setenv("DPDB_ENGINE", "bdb")
    assert _engine.engine_strategy() == "bdb"
    monkeypatch.setenv("DPDB_ENGINE", special)
    if special in (_engine.MONITORING_STRATEGIES if LEGACY else _engine.LEGACY_STRATEGIES):
        with pytest.raises(ValueError):
            _engine.engine_strategy()
    elif _engine.engine_available():
        assert _engine.engine_strategy() == special
    monkeypatch.setenv("DPDB_ENGINE", "bogus")
    with pytest.raises(ValueError):
        _engine.engine_strategy()
    monkeypatch.delenv("DPDB_ENGINE")
    assert _engine.engine_strategy() == ("native" if _engine.engine_available() else "bdb")


def test_bdb_strategy_leaves_pdb_alone(monkeypatch):
    import pdb

    monkeypatch.setenv("DPDB_ENGINE", "bdb")

    class P(_engine.NativeEngineMixin, pdb.Pdb):
        pass

    assert P()._dpdb_native is False


@needs_native
def test_backend_per_interpreter():
    expected = "monitoring" if sys.version_info >= (3, 12) else "tracer"
    assert _engine.engine_backend() == expected


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_nothing_traced_after_continue_without_breakpoints(mode):
    rc, out = run_driver("dpdb", "armed.py", ["c"], engine=mode)
    assert "armed False" in out, out
    if sys.version_info >= (3, 12):
        assert "events [0]" in out, out


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
@pytest.mark.parametrize("line,where", [(11, "started_early"), (20, "spinning")])
def test_breakpoint_reaches_threads_started_before_it(line, where, mode):
    # The workers are running (one blocked, one spinning inside the very function that gets the
    # breakpoint) when the main thread sets it; stock pdb traces only its own thread.
    rc, out = run_driver("dpdb", "late_bp.py", ["b %d" % line, "c", "p i", "c", "p i", "c"],
                         engine=mode)
    stop = "late_bp.py(%d)%s()" % (line, where)
    assert out.count(stop) == 2, out
    assert "(Pdb) 0\n" in out and "(Pdb) 1\n" in out
    assert out.rstrip().endswith("joined"), out


STATS = "p __import__('dpdb._engine_native', fromlist=['stats']).stats()"


def stats_printed(out):
    import ast

    return [ast.literal_eval(line[line.index("{"):]) for line in out.splitlines()
            if "'trapped'" in line]


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
@pytest.mark.parametrize("program, commands, shown, stops, exactly, after", [
    # The hot function's line.
    ("hotbp.py", ["b 8", "c", "c", "p i, total"], "(1, 0)", 2, True, "co 3"),
    # A `for` header, entered again in its middle by the jump at the end of the body and by
    # `continue`: those jumps get the check too.
    ("forheader.py", ["b 15", "c", "c", "c", "c", "p i, total, skipped"], "(2, 2, 1)", 4, True,
     "single (16, 2)"),
    # nbody's advance(): the jump at the header's start must cover FOR_ITER too, which then
    # runs in the tail. 3.13 reports that multi-line header's line at other instructions, and
    # bdb stops a round later there too (the parity scenario holds the two together).
    ("forheader.py", ["b 57, locals().get('m2') == 3.0", "c", "c", "p i, m1, m2"],
     "(%d, 2.0, 3.0)" % (sys.version_info >= (3, 13)), 2, False, "advanced ["),
], ids=["line", "for_header", "wide_for_header"])
def test_stops_come_from_checks_in_bytecode(mode, program, commands, shown, stops, exactly, after):
    # Under the patching strategies on 3.9-3.11 the function runs a copy with the check compiled
    # in, and each stop is delivered by that check, not by a trace function; the other
    # strategies and 3.12+ never patch.
    rc, out = run_driver("dpdb", program, commands + [STATS, "cl 1", "c"], engine=mode)
    assert "(Pdb) %s\n" % shown in out, out
    (stats,) = stats_printed(out)
    if mode in PATCHING and LEGACY:
        trapped = stats["trapped"]
        assert stats["patched"] >= 1 and (trapped == stops if exactly else trapped >= stops), stats
    else:
        assert stats["patched"] == 0 and stats["trapped"] == 0, stats
    assert after in out, out


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_frame_running_when_breakpoint_set_is_traced(mode):
    # main() is running when its own breakpoint appears: it cannot switch to a patched copy and
    # the tracer serves it, while work() (started later) gets the check.
    rc, out = run_driver("dpdb", "hotbp.py", ["b 77", "b 8", "c", "p i", "cl 2", "c", STATS, "c"],
                         engine=mode)
    assert "hotbp.py(8)work()" in out and "hotbp.py(77)main()" in out, out
    (stats,) = stats_printed(out)
    assert stats["trapped"] == (1 if mode in PATCHING and LEGACY else 0), stats


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_breakpoint_reaches_thread_calling_after_it(mode):
    # The worker was started before the breakpoint and calls the function only after it was set:
    # under 'native' it runs the patched copy, untraced, and stops through the check.
    rc, out = run_driver("dpdb", "late_call.py", ["b 10", "c", "p i", "c", "p i", "cl 1", "c"],
                         engine=mode)
    assert out.count("late_call.py(10)hot()") == 2, out
    assert "(Pdb) 0\n" in out and "(Pdb) 1\n" in out
    assert out.rstrip().endswith("worker [3]"), out


def run_program(name, engine):
    import subprocess

    from conftest import _dpdb_path

    env = dict(os.environ, DPDB_ENGINE=engine, PYTHONPATH=_dpdb_path())
    return subprocess.run([sys.executable, os.path.join(PROGRAMS, name)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120).stdout


@needs_native
@pytest.mark.skipif(not LEGACY, reason="bytecode checks exist on 3.9-3.11 only")
def test_checks_fire_exactly_where_line_events_do():
    # A conditional breakpoint on every line of some stdlib modules: the checks compiled into
    # the bytecode must hand bdb exactly the line events the tracer hands it (with the conditions
    # left to bdb, nocond; the tracer alone: gate), and the patched code must compute the same
    # results. Where the engine answers the conditions, it answers exactly those events.
    checks = run_program("every_line.py", "nocond").split()
    gate = run_program("every_line.py", "gate").split()
    native = run_program("every_line.py", "native").split()
    runs = (checks, gate, native)
    for run in runs:
        assert run[:2] == ["same", "True"], runs
    assert len({int(run[3]) + int(run[9]) for run in runs}) == 1, runs
    assert int(checks[5]) > 10 and int(checks[7]) > 0 and checks[9] == "0", checks
    assert gate[5] == gate[7] == "0" and int(gate[9]) > 10, gate
    assert int(native[5]) > 10 and int(native[9]) > 10, native


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_suspended_generators_switch_to_checks(mode):
    # counter() and co() were suspended before their breakpoints existed; on resuming, the gate
    # gives their frames the patched code, and all three stops come from its checks.
    rc, out = run_driver("dpdb", "hotbp.py", ["b 45", "b 58", "c", "c", "c", STATS, "cl 1",
                                              "cl 2", "c"], engine=mode)
    assert out.count("hotbp.py(45)counter()") == 2 and "hotbp.py(58)co()" in out, out
    (stats,) = stats_printed(out)
    assert stats["trapped"] == (3 if mode in PATCHING and LEGACY else 0), stats
    assert "co 3" in out, out


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_a_one_line_functions_line_gets_its_check(mode):
    # The line of a one-line function also holds its start (3.11: the RESUME that runs before
    # its first line event), which once kept the check out of its code: 3.11 then left swap mode
    # for the gate, and with it the interpreter's inlined calls.
    rc, out = run_driver("dpdb", "onelinedef.py", [
        "b onelinemod.py:1, x < 0", "b onelinemod.py:7", "c", STATS, "cl", "y", "c"],
        engine=mode)
    assert "onelinemod.py(7)doubled()" in out and "total 92" in out, out
    (stats,) = stats_printed(out)
    if mode == "native" and SWAP:
        assert stats["swap"] and not stats["swap_blocker"], stats
    if mode in PATCHING and LEGACY:
        assert stats["patched"] >= 2 and stats["trapped"] == 1, stats


@needs_native
@pytest.mark.parametrize("program, line, variable, end", [
    ("kinds.py", 27, "depth", 89), ("forattr.py", 26, "bag", 50)])
def test_a_line_start_only_its_own_line_jumps_to_keeps_no_check_out(program, line, variable, end):
    # walk's `if` (kinds.py) and nested's inner `for` header (forattr.py) each have a second
    # start of their line that nothing falls into and that only a forward jump of the line
    # reaches (the `if`'s implicit return, the inner loop's exit to the outer loop's jump back):
    # it reports no line on 3.10/3.11, and once kept the function's checks out of its code (the
    # tracer answered every hit). The guard in the code now answers them.
    rc, out = run_driver("dpdb", program, [
        "b %d, %s is None" % (line, variable), "b %d" % end, "c", STATS, "cl", "y", "c"],
        engine="native")
    assert "done" in out, out
    (stats,) = stats_printed(out)
    assert stats["conditions_false"] > 1, stats
    if LEGACY:
        assert stats["patched"] >= 1 and stats["conditions_guarded"] > 0, stats


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_swap_mode_other_modules(mode):
    # 3.11 native: breakpoints only in modules whose code no live frame runs, so the functions
    # get the patched code and no evaluator is installed; a module imported later makes the
    # audit hook hand over to the gate (until a rescan).
    rc, out = run_driver("dpdb", "swap.py", [
        "b swapmod.py:4", "b swapmod.py:10", "b swapmod.py:21", "c", STATS, "cl 1", "c",
        "p x, n", "c", "b swaplate.py:2", "c", STATS, "p x", "cl", "y", "c"], engine=mode)
    assert "swapmod.py(4)hot()" in out and "swapmod.py(10)add()" in out, out
    assert "swapmod.py(21)bump()" in out and "swaplate.py(2)late()" in out, out
    assert "(Pdb) (1, 10)\n" in out and out.rstrip().endswith("hot again 1"), out
    first, second = stats_printed(out)
    if mode == "native" and SWAP:
        assert first["swap"] and first["swapped"] >= 3, first
        assert not second["swap"], second
    else:
        assert not first["swap"] and first["swapped"] == 0, first
    if mode in PATCHING and LEGACY:
        assert first["trapped"] == 1 and second["trapped"] == 4, (first, second)
    # Scan mode: one scan per set of breakpoint files; the later module's code comes from the
    # code watcher (hot, make_adder, add, Box, __init__, bump, gen, loop: 7 of swapmod's eight
    # code objects are alive, the module's own code is gone; then late and swaplate's module).
    if mode in SCANNING and SCAN:
        assert first["scan"] and first["scans"] == 1 and first["scan_codes"] == 7, first
        assert second["scan"] and second["scans"] == 2 and second["scan_codes"] == 9, second
    else:
        assert not first["scan"] and not second["scan"], (first, second)


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_swap_mode_waits_for_suspended_generator(mode):
    # The generator was suspended in original code before the breakpoint: the gate must serve
    # it; once it is done, a rescan hands over to swap mode.
    rc, out = run_driver("dpdb", "swap_gen.py", [
        "b swapmod.py:27", "c", STATS, "p i", "c", "p i", "cl 1", "c", "b swapmod.py:4", STATS,
        "c", STATS, "p i", "cl", "y", "c"], engine=mode)
    assert out.count("swapmod.py(27)gen()") == 2 and "(Pdb) 1\n(Pdb)" in out, out
    assert "swapmod.py(4)hot()" in out and out.rstrip().endswith("hot 1"), out
    first, _, third = stats_printed(out)
    assert not first["swap"], first
    if mode == "native" and SWAP:
        assert third["swap"], third


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_swap_mode_reaches_thread_in_caller_loop(mode):
    # A thread loops over calls of the function when its breakpoint is set: a later call runs
    # the patched code (swap mode) or is gated (or traced, if a call was running), and stops.
    rc, out = run_driver("dpdb", "swap_thread.py", ["b swapmod.py:4", "c", "p i", "cl 1", "c"],
                         engine=mode)
    assert out.count("swapmod.py(4)hot()") == 1, out
    assert ("(Pdb) 0\n" in out or "(Pdb) 1\n" in out) and out.rstrip().endswith("worker 1"), out


@needs_native
@pytest.mark.skipif(not LEGACY, reason="bytecode checks exist on 3.9-3.11 only")
def test_patched_code_pickles():
    # Patched code holds the checker builtin in co_consts: pickle must find it by reference.
    import pickle

    from dpdb import _engine_native

    checker = _engine_native.dpdb_check_breakpoint
    assert pickle.loads(pickle.dumps(checker)) is checker


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
@pytest.mark.parametrize("load", ["source", "pyc"])
def test_swap_mode_hands_a_later_import_to_the_gate(mode, load, tmp_path):
    # Swap mode is on (nothing changed since the first stop) when the program imports a module
    # holding a breakpoint: the audit hook ("compile" for source, "exec" for a .pyc) must hand
    # over to the gate before the module's code runs, or late() would run unpatched.
    import py_compile
    import shutil

    for name in ("swap.py", "swapmod.py", "swaplate.py"):
        shutil.copy(os.path.join(PROGRAMS, name), str(tmp_path / name))
    if load == "pyc":
        py_compile.compile(str(tmp_path / "swaplate.py"), doraise=True,
                           cfile=str(tmp_path / "__pycache__" / (
                               "swaplate.%s.pyc" % sys.implementation.cache_tag)))
    rc, out = run_driver("dpdb", str(tmp_path / "swap.py"), [
        "b swapmod.py:4", "b swaplate.py:2", "c", STATS, "c", "c", STATS, "p x", "cl", "y", "c"],
        engine=mode)
    assert out.count("swapmod.py(4)hot()") == 2 and "swaplate.py(2)late()" in out, out
    assert "(Pdb) 2\n" in out and out.rstrip().endswith("hot again 1"), out
    before, after = stats_printed(out)
    if mode == "native" and SWAP:
        assert before["swap"] and not after["swap"], (before, after)
    else:
        assert not before["swap"] and not after["swap"], (before, after)
    # Scan mode: swaplate's code objects were made after the scan; the code watcher kept them.
    if mode in SCANNING and SCAN:
        assert before["scan"] and after["scan"] and after["scans"] == before["scans"], (before,
                                                                                      after)
        assert after["scan_codes"] > before["scan_codes"], (before, after)


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_code_compiled_before_the_breakpoint_and_run_after_it(mode):
    # The program compiled scanheld.py before the breakpoint and holds the code object, which no
    # heap scan can see (code objects are not tracked by the collector): running it must stop.
    # In scan mode the "exec" audit hook finds it.
    rc, out = run_driver("dpdb", "scan_held.py", [
        "b scanheld.py:2", "b swapmod.py:4", "c", STATS, "p x", "c", "p i", "cl", "y", "c"],
        engine=mode)
    assert "scanheld.py(2)later()" in out and "(Pdb) 2\n" in out, out
    assert "swapmod.py(4)hot()" in out and out.rstrip().endswith("hot 1"), out
    (stats,) = stats_printed(out)
    assert stats["scan"] == (mode in SCANNING and SCAN), stats


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_breakpoint_after_gc_freeze(mode):
    # A program's gc.freeze() hides its functions from gc.get_objects(): scan mode stays off and
    # the breakpoint is found as without it.
    rc, out = run_driver("dpdb", "scan_freeze.py", ["b swapmod.py:4", "c", STATS, "p i", "cl",
                                                    "y", "c"], engine=mode)
    assert "swapmod.py(4)hot()" in out and "(Pdb) 0\n" in out, out
    assert out.rstrip().endswith("hot 1"), out
    (stats,) = stats_printed(out)
    assert not stats["scan"], stats
    if mode in SCANNING and SCAN:
        assert stats["scan_blocker"] == "gc.freeze()", stats


@needs_native
@pytest.mark.skipif(LEGACY, reason="sys.monitoring exists on 3.12+")
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_armed_breakpoints_enable_no_global_event_in_scan_mode(mode):
    # Armed, not hit: in scan mode only the code of the breakpoint's file has events (local
    # LINE and JUMP); otherwise PY_START and PY_RESUME are global.
    rc, out = run_driver("dpdb", "scan_events.py", ["b swapmod.py:21", "c"], engine=mode)
    assert "hot 1" in out, out
    line_and_jump = (1 << 5) | (1 << 7)
    if mode in SCANNING and SCAN:
        assert "global events [0]" in out, out
        assert "local events: main 0, bump %d" % line_and_jump in out, out
    else:
        assert "global events [3]" in out and "local events: main 0" in out, out


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES + ["nocond", "condpy"])
def test_false_conditions_never_reach_bdb(mode):
    # The 10 runs of line 8 (hot(6), hot(4)) under a condition never true: the engine answers each
    # (counting the hit as bdb would) and bdb hears of none of them, unless DPDB_ENGINE=nocond.
    rc, out = run_driver("dpdb", "conditions.py", [
        "b 8, i < 0", "b 17", "c", "b", STATS, "cl", "y", "c"], engine=mode)
    assert "breakpoint already hit 10 times" in out, out
    (stats,) = stats_printed(out)
    assert stats["conditions_false"] == (0 if mode == "nocond" else 10), stats
    assert "count 15\nticks None" in out, out


@needs_native
@pytest.mark.parametrize("mode", ["native", "condpy", "noguard"])
def test_simple_false_conditions_run_no_python(mode):
    # `i < 0` is answered in C: after the first hit (which learns the breakpoint), no hit of the
    # 10 runs a Python call or writes `hits`, yet `b` shows all 10 (counted in C, written when pdb
    # looks); DPDB_ENGINE=condpy calls the condition as Python at every hit. A condition on a
    # call, `abs(i) < 0`, is always Python's.
    rc, out = run_driver("dpdb", "conditions.py", [
        "b 8, i < 0", "b 17, abs(k) < 0", "b 29", "c", "b", STATS, "cl", "y", "c"], engine=mode)
    assert "breakpoint already hit 10 times" in out and "breakpoint already hit 4 times" in out, out
    (stats,) = stats_printed(out)
    assert stats["conditions_false"] == 14, stats
    assert stats["conditions_in_c"] == (0 if mode == "condpy" else 9), stats
    # Each of those 9 is answered by the guard in the code's tail (3.9-3.11: the patched code's
    # check is not called; 3.12+: the function's fast copy sends no line event);
    # DPDB_ENGINE=noguard calls the check (3.9-3.11) or gets the line event (3.12+) at every hit.
    assert stats["conditions_guarded"] == (9 if mode == "native" else 0), stats


@needs_native
def test_a_condition_given_at_the_prompt_is_answered_as_one_given_with_its_breakpoint():
    # `condition 2 i < 0` after `b 8`: the engine hears of it as of a new breakpoint (3.12+: the
    # function gets its fast copy at once, not at the next change of breakpoints).
    rc, out = run_driver("dpdb", "conditions.py", [
        "b 29", "b 8", "condition 2 i < 0", "c", "b", STATS, "cl", "y", "c"], engine="native")
    assert "breakpoint already hit 10 times" in out, out
    (stats,) = stats_printed(out)
    assert stats["conditions_guarded"] == 9, stats


@needs_native
def test_identity_comparisons_run_no_python():
    # `item == -1` on Task objects and None is their identity: after the first hit (which learns
    # the breakpoint), the other 7 of run()'s first call are answered in C; AlwaysEqual's __eq__
    # is Python's, and stops.
    rc, out = run_driver("dpdb", "identity.py", [
        "b 15, item == -1", "c", "p type(item).__name__, seen", STATS, "cl", "y", "c"],
        engine="native")
    assert "('AlwaysEqual', 1)" in out, out
    (stats,) = stats_printed(out)
    assert stats["conditions_in_c"] == 8, stats


@needs_native
@pytest.mark.parametrize("mode", NATIVE_MODES)
def test_function_breakpoint_lets_only_its_learned_line_through(mode):
    # "b work" makes bdb consider every line of work() until it learns the first one it runs;
    # from then on (3.12+: at once; 3.9-3.11: from the next change of breakpoints) the engine
    # forwards that line only, not the 1000 lines of the loop that follows the first stop.
    rc, out = run_driver("dpdb", "funcbp_hot.py", [
        "b work", "c", "p n", STATS, "c", "p n", STATS, "cl", "y", "c"], engine=mode)
    assert "(Pdb) 500\n" in out and "(Pdb) 2\n" in out and out.rstrip().endswith("done"), out
    first, second = stats_printed(out)
    forwarded = second["forwarded"] - first["forwarded"]
    if LEGACY:
        assert forwarded > 1000, (first, second)
    else:
        assert forwarded == 1, (first, second)


@needs_native
@pytest.mark.skipif(not SCAN, reason="3.12 takes superinstructions apart for good")
@pytest.mark.parametrize("mode", ["native", "noscan", "nosuper"])
def test_superinstructions_come_back_after_the_events_go(mode):
    # pair() had line events (a breakpoint on its def line, where none of its frames stops: only
    # code whose lines reach a breakpoint gets them) and answered DISABLE on each line, in a
    # thread while the main thread waited in join(): CPython took its superinstructions apart,
    # and the engine puts back all four pairs that code creation made, unless told not to.
    # spaced() calls between its lines, so the engine restores it between two DISABLEs: its pair
    # that spans two lines goes back only through the restore around the later line's start.
    rc, out = run_driver("dpdb", "superinstructions.py", [
        "b superpair.py:16", "b superpair.py:7", "b superpair.py:38", "c", "p created, fused",
        STATS, "cl", "y", "c"], engine=mode)
    assert out.rstrip().endswith("run 12"), out
    (stats,) = stats_printed(out)
    if mode == "nosuper":
        assert "(Pdb) ((4, 1), (0, 0))\n" in out and stats["superinstructions"] == 0, out
    else:
        assert "(Pdb) ((4, 1), (4, 1))\n" in out and stats["superinstructions"] >= 5, out


@needs_native
@pytest.mark.skipif(not SCAN, reason="3.12 takes superinstructions apart for good")
@pytest.mark.parametrize("mode", ["native", "noscan", "nosuper"])
def test_superinstructions_come_back_after_a_step(mode):
    # 's' steps into pair(), which starts under the step's global events and gets every event
    # (none answered DISABLE); once 'c' switched them off, CPython takes them out of pair() with
    # no callback: the engine brings its instrumentation up to date at once and puts its pairs
    # back.
    rc, out = run_driver("dpdb", "superinstructions_step.py", [
        "s", "c", "p created, after", "c"], engine=mode)
    assert "total 602 " in out, out
    assert "(Pdb) (4, %d)\n" % (0 if mode == "nosuper" else 4) in out, out


@needs_native
@pytest.mark.parametrize("mode", ["native", "noguard"])
def test_functions_made_at_every_call_run_guarded_copies(mode):
    # add() is made anew by each call of make_adder(): `n < 0` on its line is learned at the
    # first of its 4 hits, and the 3 after are answered by the guard in its code's tail (3.12+:
    # make_adder's copy makes functions of add's copy; 3.9-3.11: the gate runs add's patched code).
    rc, out = run_driver("dpdb", "kinds.py", [
        "b 66, n < 0", "b 89", "c", "b", STATS, "cl", "y", "c"], engine=mode)
    assert "breakpoint already hit 4 times" in out, out
    assert "adders [10, 11, 12, 13]" in out, out
    (stats,) = stats_printed(out)
    assert stats["conditions_guarded"] == (3 if mode == "native" else 0), stats
