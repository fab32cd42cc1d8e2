import sys

import helper


def main():
    breakpoint()
    helper.fib(5)
    from dpdb import _engine

    stats = _engine._native.stats() if _engine._native else {}
    print("armed", stats.get("armed"))
    if sys.version_info >= (3, 12) and _engine._native:
        tools = [t for t in range(6) if sys.monitoring.get_tool(t) == "dpdb"]
        print("events", [sys.monitoring.get_events(t) for t in tools])


main()
