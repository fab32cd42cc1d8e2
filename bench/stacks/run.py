"""How long `dpdb stacks` takes for every thread of every process of a job of N processes,
none of them paused: bench/stacks/run [--processes N] [--rounds R].

The `dpdb` executable beside the interpreter (or on PATH) runs the job; the time is the wall
time of the whole `dpdb stacks --json` command, process start included."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from dpdb_bench import dpdb_executable, private_environment  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    dpdb = dpdb_executable()
    with private_environment() as env:
        measure(dpdb, env, args)


def measure(dpdb, env, args):
    job = subprocess.Popen([dpdb, "run", os.path.join(HERE, "job.py"),
                            str(args.processes)], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        wanted = args.processes + 1
        deadline = time.monotonic() + 120
        while True:
            done = subprocess.run([dpdb, "ps", "--json"], env=env, capture_output=True, text=True)
            count = len(json.loads(done.stdout)) if done.returncode == 0 else 0
            if count >= wanted:
                break
            if time.monotonic() > deadline or job.poll() is not None:
                sys.exit("only %d of %d processes reached the hub" % (count, wanted))
            time.sleep(0.5)
        times, answered, threads = [], [], []
        for _ in range(args.rounds):
            start = time.monotonic()
            done = subprocess.run([dpdb, "stacks", "--json"], env=env, capture_output=True,
                                  text=True)
            times.append(time.monotonic() - start)
            processes = json.loads(done.stdout)
            full = [p for p in processes if p.get("stacks", {}).get("threads")]
            answered.append(len(full))
            threads.append(sum(len(p["stacks"]["threads"]) for p in full))
            time.sleep(0.2)
        print("dpdb stacks of %d running processes (%d threads), %d rounds, Python %s" % (
            wanted, max(threads), args.rounds, sys.version.split()[0]))
        print("  wall time: median %.0f ms, max %.0f ms" % (
            1000 * statistics.median(times), 1000 * max(times)))
        print("  processes answered with Python stacks: min %d of %d" % (min(answered), wanted))
    finally:
        if job.poll() is None:
            os.killpg(job.pid, 9)
            job.wait()


if __name__ == "__main__":
    main()
