"""An IDE's waits, `dpdb dap` against debugpy 1.8, in one run: bench/dap/run [--runs R]
[--steps S] [--workers W].

The same flow (tests/dap/compare.js, Microsoft's DebugClient) on the same program
(tests/e2e/programs/dap_single.py, one process), each adapter reached on a loopback port as VS
Code's `"connect"` reaches it: `python -m debugpy --listen` with the program, and `dpdb dap
--listen` with the program under `dpdb run` and a standalone hub. Measured by the client:

  first stop   from the attach request to the first stopped event (attach, a breakpoint set,
               configurationDone, the program reaching the line: it calls work() every 10 ms),
               the program already running (debugpy's listens before it runs; dpdb's printed its
               first line)
  step         a `next` request to its stopped event, inside work()

and, on a job of W processes that all reach one breakpoint at once (tests/e2e/programs/
dap_many.py: W forked workers calling work() every 10 ms; tests/dap/many_stops.js, a client that
takes startDebugging as VS Code does, each process a child session, debugpy with subProcess: true
and --wait-for-client):

  all stopped  from the job's launch (the Popen of `python -m debugpy` or `dpdb run`, the
               adapter started after it) to the last of the W processes' first stopped events

Medians over the runs (steps: over every step of every run); the ratio is dpdb / debugpy. There
is no "no debugger" baseline for a wait that exists only under a debugger. Needs node, `npm ci
--prefix tests/dap`, and debugpy in this interpreter."""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from dpdb_bench import dpdb_executable, private_environment, stop, wait_for  # noqa: E402

PROGRAM = os.path.join(ROOT, "tests", "e2e", "programs", "dap_single.py")
CLIENT = os.path.join(ROOT, "tests", "dap", "compare.js")
MANY = os.path.join(ROOT, "tests", "e2e", "programs", "dap_many.py")
MANY_CLIENT = os.path.join(ROOT, "tests", "dap", "many_stops.js")


def line_of(marker, program=PROGRAM):
    with open(program) as source:
        for number, text in enumerate(source, 1):
            if marker in text:
                return number
    raise SystemExit("no %r in %s" % (marker, program))


def listening(port):
    with open("/proc/net/tcp") as table:
        return any(f[1] == "0100007F:%04X" % port and f[3] == "0A"
                   for f in (line.split() for line in table))


def node(script, adapter, env):
    done = subprocess.run(["node", script], capture_output=True, text=True, timeout=300, env=env)
    if done.returncode != 0:
        raise SystemExit("%s: %s%s" % (adapter, done.stdout, done.stderr))
    return json.loads(done.stdout.strip().splitlines()[-1])


def one_stop(steps):
    """The flow of compare.js: first stop and steps, on dap_single.py."""
    def flow(env, adapter, port, launched):
        return node(CLIENT, adapter, dict(env, ADAPTER=adapter, PORT=str(port), PROGRAM=PROGRAM,
                                          STEPS=str(steps),
                                          LINE_WORK=str(line_of("dap: first line of work"))))
    return PROGRAM, (), flow, True


def many_stops(workers):
    """W processes stopped at once, on dap_many.py: launch to the last stopped event."""
    def flow(env, adapter, port, launched):
        seen = node(MANY_CLIENT, adapter,
                    dict(env, ADAPTER=adapter, PORT=str(port), PROGRAM=MANY,
                         WORKERS=str(workers), LINE=str(line_of("dap_many:", MANY))))
        return {"allStoppedMs": seen["lastStopEpochMs"] - launched * 1000}
    return MANY, ("--wait-for-client",), flow, False


def with_debugpy(env, job):
    program_path, options, flow, _ = job
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    launched = time.time()
    program = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen",
                                "127.0.0.1:%d" % port, *options, program_path], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: listening(port), "debugpy to listen")
        return flow(env, "debugpy", port, launched)
    finally:
        stop(program)


def with_dpdb(env, job):
    program_path, _, flow, ready_first = job
    dpdb = dpdb_executable()
    socket_path = os.path.join(env["XDG_RUNTIME_DIR"], "bench-hub.sock")
    if os.path.exists(socket_path):  # the previous run's hub, killed: not yet this one's
        os.unlink(socket_path)
    hub = subprocess.Popen([dpdb, "hub", "--socket", socket_path], env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    started = []
    try:
        wait_for(lambda: os.path.exists(socket_path), "the hub")
        job_env = dict(env, DPDB_HUB="unix:" + socket_path)
        launched = time.time()
        job = subprocess.Popen([dpdb, "run", program_path], env=job_env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True, text=True)
        started.append(job)
        server = subprocess.Popen([dpdb, "dap", "--listen", "127.0.0.1:0"], env=job_env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
        started.append(server)
        port = int(re.search(r":(\d+)$", server.stderr.readline().strip()).group(1))
        if ready_first:
            # As debugpy's program runs once its port listens: the program's first line.
            if "running" not in job.stdout.readline():
                raise SystemExit("dpdb run %s: no first line" % program_path)
        return flow(job_env, "dpdb", port, launched)
    finally:
        for process in started:
            stop(process)
        stop(hub)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--workers", type=int, default=20)
    args = parser.parse_args()
    results = {"debugpy": [], "dpdb": []}
    with private_environment() as env:
        env.pop("PYTHONBREAKPOINT", None)
        for _ in range(args.runs):  # alternated, so that both see the same machine
            for name, run in (("debugpy", with_debugpy), ("dpdb", with_dpdb)):
                seen = run(env, one_stop(args.steps))
                seen.update(run(env, many_stops(args.workers)))
                results[name].append(seen)
    print("Python %d.%d, %d runs, %d steps each, %d workers" % (
        sys.version_info[:2] + (args.runs, args.steps, args.workers)))
    medians = {}
    for name, runs in results.items():
        first = statistics.median(r["firstStopMs"] for r in runs)
        step = statistics.median(s for r in runs for s in r["steps"])
        many = statistics.median(r["allStoppedMs"] for r in runs)
        medians[name] = (first, step, many)
        print("%-8s first stop %8.1f ms   step %7.2f ms   %d stopped %8.1f ms (max %.1f)" % (
            name, first, step, args.workers, many, max(r["allStoppedMs"] for r in runs)))
    print("dpdb / debugpy: first stop %.2fx, step %.2fx, %d stopped %.2fx" % (
        medians["dpdb"][0] / medians["debugpy"][0], medians["dpdb"][1] / medians["debugpy"][1],
        args.workers, medians["dpdb"][2] / medians["debugpy"][2]))


if __name__ == "__main__":
    main()
