import sys

import swapmod


def main():
    breakpoint()
    print("hot", swapmod.hot(2))
    tools = [t for t in range(6) if sys.monitoring.get_tool(t) == "dpdb"]
    print("global events", [sys.monitoring.get_events(t) for t in tools])
    print("local events: main %d, bump %d" % (
        sys.monitoring.get_local_events(tools[0], main.__code__),
        sys.monitoring.get_local_events(tools[0], swapmod.Box.bump.__code__)))


main()
