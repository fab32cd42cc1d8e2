"""Logpoints: `dpdb break --log` sends a message from every process that runs the line, without
stopping it; the hub keeps the messages (across a restart) and `dpdb logs` shows them merged in
time order, as JSON, as they come, or as a Chrome trace with one track per process."""

import contextlib
import json
import os
import re
import signal
import subprocess

import pexpect
import pytest

from conftest import (PROMPT, PYTHON, STOPS_ON_CALL, expect_all, finish, line_of, plain, program,
                      stop_line, wait_until)
from test_hub import Hub

PIPELINE = program("pipeline.py")
STAGES = program("pipeline_stages.py")
STORE = program("pipeline_store.py")
REQUESTS = 8


def bare_output(dpdb, *args):
    """What the program prints without any debugger."""
    go = os.path.join(dpdb.root, "go-bare")
    open(go, "w").close()
    done = subprocess.run([PYTHON] + list(args[:1]) + [go] + list(args[1:]), cwd=dpdb.root,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def logs(dpdb, *args, env=None):
    done = dpdb.run("dpdb", "logs", "--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def program_lines(transcript):
    """The program's own lines in a `dpdb run` terminal: every line but dpdb's notices."""
    lines = transcript.replace("\r", "").split("\n")
    return [line for line in lines if line and not line.startswith("[dpdb]")]


def test_logpoints_follow_requests_through_every_process(dpdb):
    state = os.path.join(dpdb.root, "state")
    hub = Hub(dpdb, "--state-dir", state)
    expected = bare_output(dpdb, PIPELINE, str(REQUESTS))
    # Before any process of the job exists: armed in each as it starts.
    received = line_of(STAGES, "stage 1: received")
    added = dpdb.run("dpdb", "break", "pipeline_stages.py:%d" % received,
                     "--log", "recv {request}: {len(rows)} rows", env=hub.env)
    assert added.returncode == 0 and "logpoint 1 at" in added.stdout, added.stderr

    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", PIPELINE, go, str(REQUESTS),
                     env=dict(hub.env, DPDB_TAGS="role=pipeline"))
    run.expect(r"pipeline ready (\d+) (\d+) (\d+) (\d+)")
    main, forked, spawned, store = (int(p) for p in run.match.groups())
    # "ready" says every process runs its code, not that each has reached the hub: `dpdb break`
    # counts only the processes its hub knows (failed in CI on 3.12: "not loaded in the 3 that
    # answered", the store listed 0.3 s later; and once "in the 4": the store not yet in its code).
    wait_until(lambda: {main, forked, spawned, store} <= listed_pids(dpdb, hub),
               "the pipeline's 4 processes in dpdb ps")

    # While every process runs: a field that raises, and a condition that filters.
    parsed = line_of(STAGES, "stage 2: parsed")
    added = dpdb.run("dpdb", "break", "pipeline_stages.py:%d" % parsed,
                     "--log", "parse {request}: {total} {rows[99]}", env=hub.env)
    assert added.returncode == 0 and "armed in" in added.stdout, added.stdout
    stored = line_of(STORE, "stage 3: stored")
    added = dpdb.run("dpdb", "break", "pipeline_store.py:%d" % stored, "--cond",
                     "request == 'req-003'", "--log", "store {request}: {stored}", env=hub.env)
    assert added.returncode == 0 and "armed in 1 process" in added.stdout, added.stdout
    listed = dpdb.run("dpdb", "break", "--list", env=hub.env).stdout
    assert "if request == 'req-003' log \"store {request}: {stored}\"" in listed, listed

    follow = dpdb.spawn("dpdb", "logs", "--follow", env=hub.env)
    open(go, "w").close()
    run.expect(r"pipeline done total=600")
    finish(run, 0)
    # The program's output is what it prints without a debugger, no line split by a notice.
    transcript = run.logfile_read.getvalue()
    def results(lines):  # the pids of "pipeline ready" differ from run to run
        return [line for line in lines if "->" in line or "pipeline done" in line]

    assert results(program_lines(transcript)) == results(expected.splitlines()), transcript
    # dpdb run printed the messages as they came.
    assert re.search(r"\[dpdb\] \S+ \S+ pid %d \[role=pipeline\] frontend: recv req-007: 4 rows"
                     % main, transcript), transcript

    messages = wait_for_messages(dpdb, hub, 2 * REQUESTS + 1)
    assert [m["time"] for m in messages] == sorted(m["time"] for m in messages)
    by_text = {m["text"]: m for m in messages}
    assert len(by_text) == len(messages), messages
    for i in range(REQUESTS):
        request = "req-%03d" % i
        recv = by_text["recv %s: %d rows" % (request, i % 4 + 1)]
        parse = by_text["parse %s: %d <rows[99] raised IndexError: list index out of range>"
                        % (request, sum(range(i % 4 + 1)) * 3)]
        assert (recv["pid"], recv["thread"]) == (main, "frontend")
        assert (parse["pid"], parse["thread"]) == ([forked, spawned][i % 2], "MainThread")
        assert recv["tags"] == parse["tags"] == {"role": "pipeline"}
        assert recv["time"] <= parse["time"]
        assert recv["bp"] == 1 and parse["bp"] == 2
    only = [m for m in messages if m["text"].startswith("store ")]
    assert [m["text"] for m in only] == ["store req-003: 180"]
    assert only[0]["pid"] == store and only[0]["tags"] == {"role": "store"}
    assert by_text["parse req-003: 18 <rows[99] raised IndexError: list index out of range>"][
        "time"] <= only[0]["time"]
    for m in messages:
        assert m["host"] and isinstance(m["tid"], int)

    # As they came, in a terminal of their own.
    # (each process's in its order; processes' batches may come in any order)
    expect_all(follow, "store req-003: 180", "recv req-007: 4 rows",
               r"pid %d \[role=pipeline\] MainThread: parse req-007: 18" % spawned)
    follow.kill(signal.SIGINT)
    follow.expect(pexpect.EOF)

    # One process's messages.
    assert {m["pid"] for m in logs(dpdb, str(forked), env=hub.env)} == {forked}
    text = dpdb.run("dpdb", "logs", str(store), env=hub.env).stdout
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3} \S+ pid %d \[role=store\] MainThread: "
                        r"store req-003: 180\n" % store, text), text

    # The trace: one track per process, a thread in each, every message an instant event.
    trace_file = os.path.join(dpdb.root, "trace.json")
    written = dpdb.run("dpdb", "logs", "--trace-events", trace_file, env=hub.env)
    assert written.returncode == 0, written.stderr
    assert "%d messages from 4 processes" % len(messages) in written.stdout
    with open(trace_file) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    tracks = {e["pid"]: e["args"]["name"] for e in events
              if e["ph"] == "M" and e["name"] == "process_name"}
    assert set(tracks) == {main, forked, spawned, store}
    assert "[role=store]" in tracks[store]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    instants = [e for e in events if e["ph"] == "i"]
    assert len(instants) == len(messages)
    assert [e["ts"] for e in instants] == sorted(e["ts"] for e in instants)
    for event in instants:
        assert event["s"] == "t" and (event["pid"], event["tid"]) in threads
        assert isinstance(event["ts"], (int, float)) and event["args"]["pid"] == event["pid"]
    assert threads[(main, by_text["recv req-000: 1 rows"]["tid"])] == "frontend"

    # The hub keeps them across a restart.
    hub.child.kill(signal.SIGTERM)
    hub.child.expect(pexpect.EOF)
    again = Hub(dpdb, "--state-dir", state)
    assert logs(dpdb, env=again.env) == messages
    listed = dpdb.run("dpdb", "break", "--list", env=again.env).stdout
    assert 'log "recv {request}: {len(rows)} rows"' in listed, listed


def listed_pids(dpdb, hub):
    done = dpdb.run("dpdb", "ps", "--json", env=hub.env)
    assert done.returncode == 0, done.stderr
    return {p["pid"] for p in json.loads(done.stdout)}


def wait_for_messages(dpdb, hub, count):
    found = []

    def enough():
        found[:] = logs(dpdb, env=hub.env)
        return len(found) >= count

    try:
        wait_until(enough, "%d logpoint messages" % count)
    except AssertionError:
        raise AssertionError("%d logpoint messages did not come; these did: %s"
                             % (count, sorted(m["text"] for m in found)))
    return found


def test_a_flood_drops_with_a_count_and_the_program_runs_on(dpdb):
    rounds = 30000
    hub = Hub(dpdb)  # outlives the run: its last messages are counted after it ended
    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", program("flood.py"), go, str(rounds), env=hub.env)
    run.expect("flood ready")
    hot = line_of(program("flood.py"), "the hot line")
    # A message that does not compile is armed nowhere, and the process says why.
    broken = dpdb.run("dpdb", "break", "flood.py:%d" % hot, "--log", "round {i", env=hub.env)
    assert "! logpoint message: '{' at character 7 is never closed" in broken.stdout, broken.stdout
    assert dpdb.run("dpdb", "break", "--clear", env=hub.env).returncode == 0
    added = dpdb.run("dpdb", "break", "flood.py:%d" % hot, "--log", "round {i}", env=hub.env)
    assert added.returncode == 0 and "armed in 1 process" in added.stdout, added.stdout
    open(go, "w").close()
    run.expect("flood done %d" % sum(range(rounds)), timeout=120)
    # Beyond the rate, the engine drops a due message itself, without a call into Python.
    run.expect(r"engine drops (\d+)")
    assert int(run.match.group(1)) > 0
    messages = []

    def counted():
        messages[:] = logs(dpdb, env=hub.env)
        rounds_seen = [m for m in messages if "dropped" not in m]
        return len(rounds_seen) + sum(m.get("dropped", 0) for m in messages) == rounds

    # Every round is either a message or counted among the dropped, nothing else.
    wait_until(counted, "every round accounted for")
    dropped = [m for m in messages if "dropped" in m]
    assert dropped and all(re.fullmatch(r"… \d+ messages? dropped", m["text"]) for m in dropped)
    assert all(m["text"] == "… %d message%s dropped" % (m["dropped"], "" if m["dropped"] == 1
                                                        else "s") for m in dropped)
    kept = [int(m["text"].split()[1]) for m in messages if "dropped" not in m]
    assert kept == sorted(kept) and kept[0] == 0
    finish(run, 0)
    assert "messages dropped" in run.logfile_read.getvalue()


def test_a_logpoint_at_the_prompt(dpdb):
    run = dpdb.spawn("dpdb", "run", program("sessions.py"))
    run.expect(PROMPT)
    line = line_of(program("sessions.py"), "history.append")
    run.sendline("logpoint sessions.py:%d appending {value!r} {value/0}" % line)
    run.expect(r"Logpoint (\d+): appending")
    run.expect(PROMPT)
    run.sendline("logpoint sessions.py:%d broken {value" % line)
    run.expect(r"\*\*\* logpoint message: '\{' at character \d+ is never closed")
    run.expect(PROMPT)
    run.sendline("logpoint sessions.py:%d,value>1 conditional {value}" % line)
    run.expect(r"\*\*\* usage: logpoint \[FILENAME:\]LINENO MESSAGE \(a condition comes after it: "
               r"condition N EXPR\)")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect(r"\[dpdb\] .* MainThread: appending 0 <value/0 raised ZeroDivisionError: "
               r"division by zero>")
    run.terminate(force=True)


def test_follow_outlives_a_hub_restart(dpdb):
    """`dpdb logs --follow` waits for a hub that went away and goes on where it left off."""
    state = os.path.join(dpdb.root, "state")
    hub = Hub(dpdb, "--state-dir", state)
    chatter = program("chatter.py")
    beat = line_of(chatter, "chatter: one beat")
    added = dpdb.run("dpdb", "break", "chatter.py:%d" % beat, "--log", "beat {beat}",
                     env=hub.env)
    assert added.returncode == 0, added.stderr
    follow = dpdb.spawn("dpdb", "logs", "--follow", env=hub.env)
    first = dpdb.run("dpdb", "run", chatter, "3", env=hub.env)
    assert first.returncode == 0, first.stderr
    expect_all(follow, "beat 0", "beat 1", "beat 2")

    hub.child.kill(signal.SIGTERM)
    hub.child.expect(pexpect.EOF)
    follow.expect(r"dpdb: lost the hub \([^\r\n]*\); waiting for it to come back")
    again = Hub(dpdb, "--state-dir", state)
    follow.expect("dpdb: the hub is back; following it again")
    second = dpdb.run("dpdb", "run", chatter, "2", env=again.env)
    assert second.returncode == 0, second.stderr
    expect_all(follow, "beat 0", "beat 1")
    follow.kill(signal.SIGINT)
    follow.expect(pexpect.EOF)
    # Each message once: none of the first run's again after the restart.
    shown = [line for line in plain(follow.logfile_read.getvalue()).splitlines() if "beat " in line]
    assert len(shown) == 5, shown


def test_a_logpoint_logs_on_a_line_a_step_stops_at(dpdb):
    stepped = program("stepped.py")
    run = dpdb.spawn("dpdb", "run", stepped)
    run.expect(PROMPT)
    if STOPS_ON_CALL:
        run.sendline("n")
        run.expect(PROMPT)
    added = dpdb.run("dpdb", "break", "stepped.py:%d" % line_of(stepped, "the logged line"),
                     "--log", "stepped onto i={i}")
    assert "armed in 1 process" in added.stdout, added.stdout
    for i in range(3):
        run.sendline("n")
        expect_all(run, r"\[dpdb\] [^\r\n]* MainThread: stepped onto i=%d\r\n" % i,
                   r"-> total \+= i")
        run.expect(PROMPT)
        run.sendline("n")
        run.expect(r"-> for i in range")
        run.expect(PROMPT)
    run.sendline("c")
    run.expect("total 3")
    finish(run)
    assert len(re.findall("stepped onto", run.logfile_read.getvalue())) == 3


def test_messages_sent_just_before_a_process_ends_are_kept_whatever_ends_it(dpdb):
    # A message waits in its process's queue for a moment before it is sent: a worker that
    # `with Pool()` terminated, or that a signal ended at its default action, lost it. And a
    # terminated worker whose SIGTERM went to one of dpdb's threads, not to its main thread
    # waiting for the next task, never ended: the pool's exit hung.
    hub = Hub(dpdb)  # outlives the run: the messages are read after it
    endings = program("logged_endings.py")
    go = os.path.join(dpdb.root, "go")
    run = dpdb.spawn("dpdb", "run", endings, go, "pool", env=hub.env)
    run.expect("endings ready")
    added = dpdb.run("dpdb", "break", "logged_endings.py:%d" % line_of(endings, "the logged line"),
                     "--log", "{how} {n}", env=hub.env)
    assert "armed in 1 process" in added.stdout, added.stdout
    open(go, "w").close()
    run.expect("endings done")
    finish(run)
    # A fatal signal: no Python may run then, and the agent's crash path sends what is queued,
    # in order, before its crash report.
    expected = ["pool 0", "pool 1", "pool 2", "pool 3", "os._exit 0", "SIGTERM 0", "SIGHUP 0",
                "SIGINT 0", "SIGABRT 0", "SIGABRT 1", "SIGABRT 2", "SIGSEGV 0", "SIGSEGV 1",
                "SIGSEGV 2"]
    wait_for_messages(dpdb, hub, len(expected))
    kept = logs(dpdb, env=hub.env)
    assert sorted(m["text"] for m in kept) == sorted(expected)
    for fatal in ("SIGABRT", "SIGSEGV"):
        texts = [m["text"] for m in kept if m["text"].startswith(fatal)]
        assert texts == ["%s %d" % (fatal, n) for n in range(3)], texts


def test_a_logpoint_set_at_the_prompt_on_a_line_another_thread_runs_never_pauses_it(dpdb):
    # `logpoint` filed a plain breakpoint first and attached the message after: the other
    # thread stopped there when it came in between.
    hot = program("hot_thread.py")
    stop = os.path.join(dpdb.root, "stop")
    run = dpdb.spawn("dpdb", "run", hot, stop)
    run.expect(PROMPT)
    line = line_of(hot, "the hot line")
    for _ in range(20):
        run.sendline("logpoint hot_thread.py:%d tick {i}" % line)
        run.expect(r"Logpoint (\d+): tick")
        number = run.match.group(1)
        run.expect(PROMPT)
        run.sendline("clear %s" % number)
        run.expect("Deleted breakpoint %s" % number)
        run.expect(PROMPT)
    open(stop, "w").close()
    run.sendline("c")
    run.expect("spinner done")
    finish(run)
    # The spinner's messages came, and no session but the main thread's opened.
    transcript = run.logfile_read.getvalue()
    assert re.search(r"spinner: tick \d+", transcript)
    assert not re.search(r"session (?!1\b)\d+", transcript), transcript


def test_messages_a_process_could_not_send_are_counted(dpdb):
    # Its queue holds 4: of the 10 messages made while the hub is away, 6 are dropped.
    state = os.path.join(dpdb.root, "state")
    hub = Hub(dpdb, "--state-dir", state)
    script = os.path.join(dpdb.root, "unsent.py")
    with open(script, "w") as f:
        f.write("import sys\n"
                "def note(i):\n"
                "    return i  # the noted line\n"
                "print('unsent ready', flush=True)\n"
                "for round in ('first', 'second'):\n"
                "    sys.stdin.readline()\n"
                "    for i in range(10):\n"
                "        note(i)\n"
                "    print(round, 'made', flush=True)\n")
    run = dpdb.spawn("dpdb", "run", script, env=dict(hub.env, DPDB_LOG_QUEUE="4"))
    run.expect("unsent ready")
    added = dpdb.run("dpdb", "break", "unsent.py:3", "--log", "{round} {i}", env=hub.env)
    assert "armed in 1 process" in added.stdout, added.stdout

    def hub_gone(hub):
        hub.child.kill(signal.SIGTERM)
        hub.child.expect(pexpect.EOF)

    # The hub is back before the process ends: it is told the count with what was kept.
    hub_gone(hub)
    run.sendline("")
    run.expect("first made")
    hub = Hub(dpdb, "--state-dir", state)
    kept = []

    def all_told():
        kept[:] = logs(dpdb, env=hub.env)
        return len([m for m in kept if "dropped" not in m]) + sum(
            m.get("dropped", 0) for m in kept) == 10

    wait_until(all_told, "each of the 10 messages kept or counted")
    made = [m["text"] for m in kept if "dropped" not in m]
    assert made == ["first %d" % i for i in range(len(made))] and len(made) <= 4, kept
    # The hub is gone when the process ends: the one line it prints says how many.
    hub_gone(hub)
    run.sendline("")
    run.expect("second made")
    run.expect(r"dpdb: pid \d+ ended with 10 logpoint messages not sent: the hub was not "
               r"reached in time")
    finish(run)


def noting_big_messages(dpdb, name, making):
    """A hub, and under `dpdb run` a program whose line 4 is noted with messages of 4 KB: it
    waits for a line on its stdin, then runs `making` (its source, from `import sys`)."""
    hub = Hub(dpdb, "--state-dir", os.path.join(dpdb.root, "state"))
    script = os.path.join(dpdb.root, name + ".py")
    with open(script, "w") as f:
        f.write("import sys\n"
                "text = 'x' * 4000\n"
                "def note(i):\n"
                "    return i  # the noted line\n"
                "print('%s ready', flush=True)\n"
                "sys.stdin.readline()\n" % name + making)
    run = dpdb.spawn("dpdb", "run", script, env=dict(hub.env, DPDB_LOG_RATE="1000000"))
    run.expect(name + " ready")
    added = dpdb.run("dpdb", "break", name + ".py:4", "--log", "{i} {text}", env=hub.env)
    assert "armed in 1 process" in added.stdout, added.stdout
    return hub, run


@contextlib.contextmanager
def stopped(hub):
    """The hub stopped (SIGSTOP) for the block's length: it reads nothing, and nothing tells."""
    hub.child.kill(signal.SIGSTOP)
    try:
        yield
    finally:
        hub.child.kill(signal.SIGCONT)


def test_long_messages_made_in_a_burst_all_reach_the_hub(dpdb):
    # 600 messages of 4 KB at once: more than one frame holds, so the sender must cut its batches
    # by size as well as by count (a batch of 500 such lines was refused whole, and lost).
    hub, run = noting_big_messages(dpdb, "burst",
                                   "for i in range(600):\n"
                                   "    note(i)\n"
                                   "print('all made', flush=True)\n")
    run.sendline("")
    run.expect("all made")
    finish(run, 0)
    kept = logs(dpdb, env=hub.env)
    assert [m["text"].split()[0] for m in kept] == [str(i) for i in range(600)], kept[-2:]
    assert all(len(m["text"]) > 4000 for m in kept)


def test_a_hub_that_stopped_reading_does_not_hold_the_end_of_a_process(dpdb):
    # The hub is stopped (SIGSTOP) on its Unix socket, where no heartbeat is kept to notice it.
    # The sender writes the first messages into the socket and goes idle; the process then makes
    # more than the socket can hold and ends at once, so the end's own flush is the one that
    # finds the socket full. It gives up within its bound and drops the connection: the process
    # ends, with its own status, while the hub is still stopped.
    hub, run = noting_big_messages(dpdb, "stopped_hub",
                                   "import time\n"
                                   "for i in range(10):\n"
                                   "    note(i)\n"
                                   "time.sleep(1)\n"
                                   # Quicker than the sender's wake-up, more than the socket holds.
                                   "for i in range(10, 110):\n"
                                   "    note(i)\n"
                                   "print('all made', flush=True)\n"
                                   "sys.exit(3)\n")
    with stopped(hub):
        run.sendline("")
        run.expect("all made")
        finish(run, 3)
    # The hub, let go on, keeps what reached it whole, in order.
    made = [int(m["text"].split()[0]) for m in logs(dpdb, env=hub.env)
            if "dropped" not in m and "unsent" not in m]
    assert made == sorted(set(made)), made[:20]


def test_a_hub_that_stopped_reading_does_not_hold_an_exec(dpdb):
    # The hub is stopped while the sender is blocked writing a batch into the full socket, and the
    # program then execs: the hub hears of an exec before it happens (agent/exec_watch), and that
    # message waits for the socket a bounded time, then the exec goes ahead.
    hub, run = noting_big_messages(dpdb, "exec_past_stopped_hub",
                                   "for i in range(20000):\n"
                                   "    note(i)\n"
                                   "print('all made', flush=True)\n"
                                   "import os, time\n"
                                   "time.sleep(1)\n"
                                   "os.execv('/bin/sh', ['sh', '-c', 'echo exec ran; exit 4'])\n")
    with stopped(hub):
        run.sendline("")
        run.expect("all made")
        run.expect("exec ran")
        finish(run, 4)


@pytest.mark.parametrize("ending", ["exit", "SIGSEGV"])
def test_an_end_the_hub_is_too_slow_for_says_in_dpdb_logs_how_many_were_not_sent(dpdb, ending):
    # The hub is stopped (SIGSTOP) while the process makes 20,000 messages of 4 KB: the sender
    # blocks writing its first batch (more than the socket holds, less than a frame), the end's
    # wait runs out, and the process says on stderr how many it could not send. The hub, let go
    # on again then, reads that batch and then the `exiting` (or `crash`) message with the same
    # count, which `dpdb logs` shows as a line of that process.
    hub, run = noting_big_messages(
        dpdb, "slow_hub",
        "for i in range(20000):\n"
        "    note(i)\n"
        "print('all made', flush=True)\n"
        # The sender, woken by the first message, is then blocked writing its batch to the
        # stopped hub, as the end comes (the end's own flush finding the socket full is the
        # test above).
        "import time\ntime.sleep(1)\n"
        + ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
           if ending == "SIGSEGV" else ""))
    with stopped(hub):
        run.sendline("")
        run.expect("all made")
        run.expect(r"dpdb: pid (\d+) ended with (\d+) logpoint messages not sent", timeout=60)
    pid, unsent = int(run.match.group(1)), int(run.match.group(2))
    finish(run, 0 if ending == "exit" else 128 + signal.SIGSEGV)
    told = []

    def the_end_is_told():
        told[:] = [m for m in logs(dpdb, env=hub.env) if "unsent" in m]
        return told

    wait_until(the_end_is_told, "the process's end told in dpdb logs")
    assert [(m["pid"], m["unsent"]) for m in told] == [(pid, unsent)], told
    kept = logs(dpdb, env=hub.env)
    made = [int(m["text"].split()[0]) for m in kept if "dropped" not in m and "unsent" not in m]
    # The batch under way, the first messages, in order, each once.
    assert made and made == list(range(len(made))), made[:10]
    # Every message is kept, counted among the dropped, or counted as not sent.
    assert len(made) + sum(m.get("dropped", 0) for m in kept) + unsent == 20000, kept[-3:]
    shown = dpdb.run("dpdb", "logs", env=hub.env).stdout
    assert re.search(r"pid %d dpdb: ended with %d logpoint messages not sent\n" % (pid, unsent),
                     shown), shown[-500:]
