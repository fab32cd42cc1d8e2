"""An IDE's waits, `dpdb dap` against debugpy 1.8, in one run: bench/dap/run [--runs R]
[--steps S].

The same flow (tests/dap/compare.js, Microsoft's DebugClient) on the same program
(tests/e2e/programs/dap_single.py, one process), each adapter reached on a loopback port as VS
Code's `"connect"` reaches it: `python -m debugpy --listen` with the program, and `dpdb dap
--listen` with the program under `dpdb run` and a standalone hub. Measured by the client:

  first stop   from the attach request to the first stopped event (attach, a breakpoint set,
               configurationDone, the program reaching the line: it calls work() every 10 ms)
  step         a `next` request to its stopped event, inside work()

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
from dpdb_bench import dpdb_executable, private_environment  # noqa: E402

PROGRAM = os.path.join(ROOT, "tests", "e2e", "programs", "dap_single.py")
CLIENT = os.path.join(ROOT, "tests", "dap", "compare.js")


def line_of(marker):
    with open(PROGRAM) as source:
        for number, text in enumerate(source, 1):
            if marker in text:
                return number
    raise SystemExit("no %r in %s" % (marker, PROGRAM))


def listening(port):
    with open("/proc/net/tcp") as table:
        return any(f[1] == "0100007F:%04X" % port and f[3] == "0A"
                   for f in (line.split() for line in table))


def wait_for(predicate, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for " + what)
        time.sleep(0.01)


def stop(process):
    try:
        os.killpg(process.pid, 9)
    except OSError:
        pass
    process.wait()


def client(env, adapter, port, steps):
    done = subprocess.run(["node", CLIENT], capture_output=True, text=True, timeout=300,
                          env=dict(env, ADAPTER=adapter, PORT=str(port), PROGRAM=PROGRAM,
                                   STEPS=str(steps),
                                   LINE_WORK=str(line_of("dap: first line of work"))))
    if done.returncode != 0:
        raise SystemExit("%s: %s%s" % (adapter, done.stdout, done.stderr))
    return json.loads(done.stdout.strip().splitlines()[-1])


def with_debugpy(env, steps):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    program = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen",
                                "127.0.0.1:%d" % port, PROGRAM], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: listening(port), "debugpy to listen")
        return client(env, "debugpy", port, steps)
    finally:
        stop(program)


def with_dpdb(env, steps):
    dpdb = dpdb_executable()
    socket_path = os.path.join(env["XDG_RUNTIME_DIR"], "bench-hub.sock")
    hub = subprocess.Popen([dpdb, "hub", "--socket", socket_path], env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    started = []
    try:
        wait_for(lambda: os.path.exists(socket_path), "the hub")
        job_env = dict(env, DPDB_HUB="unix:" + socket_path)
        started.append(subprocess.Popen([dpdb, "run", PROGRAM], env=job_env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True))
        server = subprocess.Popen([dpdb, "dap", "--listen", "127.0.0.1:0"], env=job_env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
        started.append(server)
        port = int(re.search(r":(\d+)$", server.stderr.readline().strip()).group(1))
        return client(job_env, "dpdb", port, steps)
    finally:
        for process in started:
            stop(process)
        stop(hub)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    results = {"debugpy": [], "dpdb": []}
    with private_environment() as env:
        env.pop("PYTHONBREAKPOINT", None)
        for _ in range(args.runs):  # alternated, so that both see the same machine
            results["debugpy"].append(with_debugpy(env, args.steps))
            results["dpdb"].append(with_dpdb(env, args.steps))
    print("Python %d.%d, %d runs, %d steps each" % (sys.version_info[:2] + (args.runs, args.steps)))
    medians = {}
    for name, runs in results.items():
        first = statistics.median(r["firstStopMs"] for r in runs)
        step = statistics.median(s for r in runs for s in r["steps"])
        medians[name] = (first, step)
        print("%-8s first stop %8.1f ms   step %7.2f ms" % (name, first, step))
    print("dpdb / debugpy: first stop %.2fx, step %.2fx" % (
        medians["dpdb"][0] / medians["debugpy"][0], medians["dpdb"][1] / medians["debugpy"][1]))


if __name__ == "__main__":
    main()
