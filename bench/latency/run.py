"""`dpdb ls` and `dpdb attach` from a client 100 ms away: bench/latency/run [--runs R]
[--delay S] [--dpdb PATH] [--hub-dpdb PATH].

A TLS hub (`dpdb hub --listen 127.0.0.1:0`, its own state directory) with one job paused at a
breakpoint (`dpdb run program.py`, on the hub's port directly); the client dials it through
relay.py, which holds every chunk `delay` seconds each way (0.05: 100 ms round trip) and counts
the client's round trips (see relay.py). Measured, each `runs` times, wall time of the command
as a user starts it (process start included), with the hub's certificate pinned
(DPDB_TLS_FINGERPRINT: the early hello, docs/remote.md) and without:

  ls       `dpdb ls` to its exit
  attach   `dpdb attach` (the one paused session) to its first prompt (round trips counted to
           there); then Ctrl-D detaches

--dpdb picks the client's executable and --hub-dpdb the hub's (both default to the `dpdb` beside
this interpreter), so that releases can be crossed: an older client with this hub, this client
with an older hub. Needs pexpect."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pexpect

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from dpdb_bench import dpdb_executable, private_environment, stop, wait_for  # noqa: E402
from relay import Relay  # noqa: E402

PROGRAM = os.path.join(HERE, "program.py")
PROMPT = re.compile(r"\(Pdb\) ")


def start_hub(dpdb, env, state):
    """`dpdb hub` on a free loopback port: (process, tcp://..., fingerprint)."""
    hub = subprocess.Popen([dpdb, "hub", "--state-dir", state, "--listen", "127.0.0.1:0"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    banner = ""
    while "export DPDB_HUB" not in banner:
        line = hub.stdout.readline()
        if not line:
            sys.exit("the hub ended early")
        banner += line
    address = re.search(r"(tcp://\S+)", banner).group(1)
    fingerprint = re.search(r"certificate (sha256:[0-9a-f]+)", banner).group(1)
    return hub, address, fingerprint


def timed_ls(dpdb, env, relay):
    start = time.perf_counter()
    done = subprocess.run([dpdb, "ls"], env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit("dpdb ls failed: " + done.stderr)
    return time.perf_counter() - start, sum(relay.round_trips())


def timed_attach(dpdb, env, relay):
    start = time.perf_counter()
    child = pexpect.spawn(dpdb, ["attach"], env=env, encoding="utf-8", timeout=60)
    try:
        child.expect(PROMPT)
        elapsed = time.perf_counter() - start
        trips = sum(relay.round_trips())  # to the prompt, not the detach after it
        child.sendeof()  # detaches; the session stays paused for the next run
        child.expect(pexpect.EOF)
        return elapsed, trips
    finally:
        child.close(force=True)


def measure(client, hub_dpdb, runs, delay):
    state = tempfile.mkdtemp(prefix="dpdb-latency-")
    with private_environment(PYTHONUNBUFFERED="1") as env:
        env.pop("PYTHONBREAKPOINT", None)
        env.pop("DPDB_TLS_FINGERPRINT", None)
        hub, address, fingerprint = start_hub(hub_dpdb, env, state)
        secret = {"DPDB_TOKEN_FILE": os.path.join(state, "secret")}
        job = None
        try:
            job = subprocess.Popen(
                [hub_dpdb, "run", "--python", sys.executable, PROGRAM],
                env=dict(env, DPDB_HUB=address, **secret), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            direct = dict(env, DPDB_HUB=address, DPDB_TLS_FINGERPRINT=fingerprint, **secret)
            wait_for(lambda: ", 1 paused session" in subprocess.run(
                [client, "ls"], env=direct, capture_output=True, text=True).stdout,
                "the job's breakpoint")
            relay = Relay(address.split("//", 1)[1], delay)
            far = dict(env, DPDB_HUB="tcp://127.0.0.1:%d" % relay.port, **secret)
            rows = []
            for pinned in (True, False):
                client_env = dict(far, DPDB_TLS_FINGERPRINT=fingerprint) if pinned else far
                for name, timed in (("ls", timed_ls), ("attach", timed_attach)):
                    times, trips = [], []
                    for _ in range(runs):
                        relay.reset()
                        elapsed, counted = timed(client, client_env, relay)
                        times.append(elapsed)
                        trips.append(counted)
                    rows.append((name, pinned, trips, times))
            relay.close()
            return rows
        finally:
            if job is not None:
                stop(job)
            stop(hub)
            shutil.rmtree(state, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds each way")
    parser.add_argument("--dpdb", help="the client's executable")
    parser.add_argument("--hub-dpdb", help="the hub's (and the job's) executable")
    args = parser.parse_args()
    client = args.dpdb or dpdb_executable()
    hub_dpdb = args.hub_dpdb or dpdb_executable()
    rows = measure(client, hub_dpdb, args.runs, args.delay)
    print("client %s, hub %s; %.0f ms round trip, %d runs (wall s, median / max)"
          % (client, hub_dpdb, 2000 * args.delay, args.runs))
    print("| command | pinned | round trips | wall |")
    print("|---|---|---|---|")
    for name, pinned, trips, times in rows:
        counted = "/".join(str(t) for t in sorted(set(trips)))
        print("| dpdb %s | %s | %s | %.2f / %.2f |" % (name, "yes" if pinned else "no", counted,
                                                     statistics.median(times), max(times)))


if __name__ == "__main__":
    main()
