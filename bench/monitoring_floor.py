"""The floor under any sys.monitoring debugger on this interpreter (3.12+): call-heavy code with
a tool that enables PY_START and PY_RESUME globally and answers DISABLE at once (as dpdb's engine
does for code without breakpoints), against the same code never monitored.

usage: python bench/monitoring_floor.py [--rounds N]

On CPython 3.12 this alone costs call-heavy code a few per cent, and the code stays that slow
after the events are switched off; 3.13 does not. The superinstructions counted in fib's live
bytecode tell why: 3.12 takes them apart whenever a code object's events change, and never fuses
them again (dpdb's engine does: docs/architecture.md, "Superinstructions"). No dpdb code runs
here."""
import argparse
import dis
import sys
import time

TOOL = 3  # a free tool id, not the debugger's


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def fresh_fib(n):
    return n if n < 2 else fresh_fib(n - 1) + fresh_fib(n - 2)


def best_of(rounds, function):
    times = []
    for _ in range(rounds):
        start = time.process_time()
        function(30)
        times.append(time.process_time() - start)
    return min(times)


def superinstructions(function):
    """Superinstructions in the live bytecode (3.12 names them FIRST__SECOND)."""
    return sum("__" in i.opname for i in dis.get_instructions(function, adaptive=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    rounds = parser.parse_args().rounds
    if sys.version_info < (3, 12):
        sys.exit("sys.monitoring exists on 3.12+")
    monitoring = sys.monitoring
    bare = best_of(rounds, fib)
    fused_bare = superinstructions(fib)
    monitoring.use_tool_id(TOOL, "floor")
    for event in (monitoring.events.PY_START, monitoring.events.PY_RESUME):
        monitoring.register_callback(TOOL, event, lambda code, offset: monitoring.DISABLE)
    monitoring.set_events(TOOL, monitoring.events.PY_START | monitoring.events.PY_RESUME)
    monitored = best_of(rounds, fib)
    monitoring.set_events(TOOL, 0)
    after = best_of(rounds, fib)
    never = best_of(rounds, fresh_fib)
    print("Python %s, fib(30), best of %d (s): bare %.4f, monitored %.4f (%.3fx), after the "
          "events are off %.4f (%.3fx), code never monitored %.4f; superinstructions in fib: "
          "%d bare, %d after" % (
              sys.version.split()[0], rounds, bare, monitored, monitored / bare, after,
              after / bare, never, fused_bare, superinstructions(fib)))


if __name__ == "__main__":
    main()
