"""Debugging a running job from the outside: global breakpoints, the process tree, stacks of
everything without stopping anything, pause, and how each process ended."""

import json
import os
import re
import signal
import sys
import time

import pexpect
import pytest

from conftest import PROMPT, expect_all, finish, line_of, program, wait_until


def ps(dpdb):
    done = dpdb.run("dpdb", "ps", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def ps_when_up(dpdb):
    """`dpdb ps --json`, or nothing while the run's hub is still starting."""
    done = dpdb.run("dpdb", "ps", "--json")
    return json.loads(done.stdout) if done.returncode == 0 else []


def by_pid(processes):
    return {p["pid"]: p for p in processes}


def test_global_breakpoint_reaches_a_tree_already_running(dpdb):
    child = dpdb.spawn("dpdb", "run", program("tree.py"))
    # The tree is running, three levels deep, before anyone sets a breakpoint.
    wait_until(lambda: any(p["argv"][-1] == "leaf" for p in ps_when_up(dpdb)),
               "the third level to start")
    tree = by_pid(ps(dpdb))
    leaf = next(p for p in tree.values() if p["argv"][-1] == "leaf")
    middle = tree[leaf["ppid"]]
    top = tree[middle["ppid"]]
    assert top["ppid"] not in tree

    line = line_of(program("tree.py"), "global breakpoint here")
    # The loop runs on while the breakpoint goes in: a condition on which rounds stop, not when.
    added = dpdb.run("dpdb", "break", "tree.py:%d" % line, "if", "i", "%", "7", "==", "6")
    assert added.returncode == 0 and "breakpoint 1 at tree.py:%d" % line in added.stdout
    pending = dpdb.run("dpdb", "break", "no_such_file.py:7")
    assert pending.returncode == 0

    child.expect(r"attached to session \d+: pid %d" % leaf["pid"])
    child.expect(PROMPT)
    child.sendline("p i % 7")
    child.expect(r"\r\n6\r\n")
    child.expect(PROMPT)

    listing = dpdb.run("dpdb", "break", "--list").stdout
    assert re.search(r"1\s+tree.py:%d if i %% 7 == 6\s+\[\d+ process" % line, listing), listing
    assert "no_such_file.py:7  [pending, 0 processes]" in listing
    assert "paused at tree.py:%d" % line in dpdb.run("dpdb", "ps").stdout

    cleared = dpdb.run("dpdb", "break", "--clear")
    assert cleared.returncode == 0
    child.sendline("c")
    wait_until(lambda: "paused at" not in dpdb.run("dpdb", "ps").stdout, "the leaf runs on")
    assert "no global breakpoints" in dpdb.run("dpdb", "break", "--list").stdout
    child.terminate(force=True)


def test_a_condition_that_raises_stops_and_says_why(dpdb):
    child = dpdb.spawn("dpdb", "run", program("busy.py"))
    child.expect("busy started")
    line = line_of(program("busy.py"), "the busy loop")
    added = dpdb.run("dpdb", "break", "busy.py:%d" % line, "if", "rounds", ">", "no_such_name")
    assert added.returncode == 0, added.stderr
    child.expect(r"\*\*\* Error in condition of breakpoint \d+ \(rounds > no_such_name\): "
                 r"NameError: name 'no_such_name' is not defined; stopped here, as pdb does")
    child.expect(r"busy.py\(%d\)work\(\)" % line)
    child.expect(PROMPT)
    child.sendline("p rounds >= 0")
    child.expect("True")
    child.terminate(force=True)


def test_stacks_pause_and_endings(dpdb):
    child = dpdb.spawn("dpdb", "run", program("endings.py"))
    child.expect(r"endings done (\d+) (\d+) (\d+)")
    quits, forked, killed = (int(g) for g in child.match.groups())
    wait_until(lambda: {quits, forked, killed} <= {p["pid"] for p in ps(dpdb)
                                                  if p["state"] != "running"},
               "the three endings recorded")
    states = {p["pid"]: p["state"] for p in ps(dpdb)}
    assert states[quits] == "exited with status 3"
    assert states[forked] == "exited with status 5"
    assert states[killed].startswith("vanished without a word")

    top = next(p for p in ps(dpdb) if p["state"] == "running")["pid"]
    text = dpdb.run("dpdb", "ps").stdout
    assert re.search(r"└─ %d .*exited with status 3" % quits, text), text

    # Stacks of a running process, twice: it was not paused in between (it kept counting).
    line = line_of(program("endings.py"), "the counter's loop")
    stacks = dpdb.run("dpdb", "stacks", str(top), "999999")
    assert stacks.returncode != 0  # one pid was unknown...
    assert "pid 999999: no such process" in stacks.stdout
    assert "in counter" in stacks.stdout  # ...and the other was still shown
    assert "Thread MainThread" in stacks.stdout
    first = json.loads(dpdb.run("dpdb", "stacks", "--json").stdout)
    assert [p for p in first if p["pid"] == top][0]["stacks"]["threads"][0]["frames"]

    ended = dpdb.run("dpdb", "log", str(quits))
    assert ended.returncode == 0 and "exited with status 3" in ended.stdout
    running = dpdb.run("dpdb", "log", str(top))
    assert running.returncode == 2 and "still running" in running.stderr

    paused = dpdb.run("dpdb", "pause", str(top))
    assert paused.returncode == 0, paused.stderr
    child.expect(r"attached to session \d+: pid %d" % top)
    child.expect(PROMPT)
    child.sendline("p count > 0")
    child.expect(r"True")
    child.expect(PROMPT)
    child.sendline("q")
    child.expect(r"no longer debugging process %d" % top)
    child.terminate(force=True)


def test_pause_all_threads_stops_every_thread_wherever_it_waits(dpdb):
    child = dpdb.spawn("dpdb", "run", program("pausable.py"))
    child.expect(r"pausable up (\d+)")
    pid = int(child.match.group(1))
    paused = dpdb.run("dpdb", "pause", "--all-threads", str(pid))
    assert paused.returncode == 0, paused.stderr
    names = {"MainThread", "napper", "waiter", "cruncher"}
    listing = dpdb.wait_ls(lambda listing: {s["thread"] for s in listing["sessions"]} == names)
    where = {s["thread"]: (os.path.basename(s["file"]), s["function"])
             for s in listing["sessions"]}
    assert {s["reason"] for s in listing["sessions"]} == {"pause"}
    assert where["napper"] == ("pausable.py", "napper"), where
    assert where["cruncher"][0] == "pausable.py", where
    # Every thread can be resumed, each from its own prompt. The first session may be any thread
    # (the waiter's is in threading.py), so the program's stop event is reached through
    # __main__; setting it ends every loop, and the program waits for its threads before it ends.
    child.expect(r"Paused by dpdb\. \(Use 'c' to resume.\)")
    child.expect(PROMPT)
    assert "Deleted breakpoint" not in child.before
    child.sendline("!__import__('__main__').stop.set()")
    child.expect(PROMPT)
    for _ in range(len(names) - 1):
        child.sendline("c")
        child.expect(r"attached to session \d+")
        child.expect(PROMPT)
    child.sendline("c")
    child.expect("pausable done")
    child.expect(pexpect.EOF)


def test_stacks_of_a_process_stuck_in_c_holding_the_gil(dpdb):
    child = dpdb.spawn("dpdb", "run", program("faults.py"), "stuck")
    child.expect("stuck starting")
    # The stuck one is the spawned child of the program (beside multiprocessing's tracker).
    processes = ps_when_up(dpdb)
    top = next(p for p in processes if p["ppid"] == child.pid)
    stuck = next(p["pid"] for p in processes
                 if p["ppid"] == top["pid"] and "resource_tracker" not in " ".join(p["argv"]))
    # faulthandler names threads by ident; the one in the regular expression holds the GIL, the
    # spinner waits for it (named by native id where the interpreter cannot map it, before 3.11).
    # The spinner wakes every 5 ms to ask for the GIL again: a look that falls in between misses
    # it, so look again then.
    for _ in range(5):
        done = dpdb.run("dpdb", "stacks", str(stuck))
        assert done.returncode == 0, done.stdout + done.stderr
        threads = {block.split("\n")[0]: block for block in done.stdout.split("hread 0x")[1:]}
        holder = [head for head, block in threads.items() if "in stuck" in block]
        spinner = [head for head, block in threads.items() if "in spin" in block]
        if spinner and ("[waits for the GIL]" in spinner[0]
                        or "waiting for the GIL: threads with native id" in done.stdout):
            break
    else:
        raise AssertionError("the spinner never showed waiting for the GIL:\n" + done.stdout)
    assert 'faults.py", line' in done.stdout
    assert holder and "[holds the GIL]" in holder[0], done.stdout
    answer = json.loads(dpdb.run("dpdb", "stacks", "--json", str(stuck)).stdout)[0]["stacks"]
    assert answer["native"] and int(holder[0].split()[0], 16) == answer["gil"]["holder"]
    child.terminate(force=True)


def test_stacks_say_which_thread_holds_the_gil_and_which_waits(dpdb):
    child = dpdb.spawn("dpdb", "run", program("faults.py"), "spinners")
    child.expect("spinners up")
    # One spinner holds the GIL, the other waits for it; the main thread sleeps without it. A
    # request can arrive while the GIL passes between threads, or, on a loaded machine, find
    # Python slower to answer than the agent waits (it sends CPython's native dump instead, with
    # no per-thread list) or the process slower than the hub waits ("no answer within 1 s"): ask
    # again then.
    wanted = {"spinner-1": "holds the GIL", "spinner-2": "waits for the GIL", "MainThread": None}
    swapped = dict(wanted, **{"spinner-1": wanted["spinner-2"], "spinner-2": wanted["spinner-1"]})
    roles = {}
    for _ in range(20):
        entry = json.loads(dpdb.run("dpdb", "stacks", "--json").stdout)[0]
        threads = entry.get("stacks", {}).get("threads", [])
        roles = {t["name"]: t["gil"] for t in threads if t["name"] in wanted}
        if roles in (wanted, swapped):
            break
        time.sleep(0.2)
    assert roles in (wanted, swapped), roles
    named = r"Thread spinner-\d .*\[(holds|waits for) the GIL\]"
    for _ in range(20):
        text = dpdb.run("dpdb", "stacks").stdout
        if re.search(named, text):
            break
        time.sleep(0.2)
    assert re.search(named, text), text
    child.terminate(force=True)


# Each fatal signal, met for real, in a child started a different way.
CRASHES = [("SIGSEGV", "spawn"), ("SIGBUS", "fork"), ("SIGFPE", "forkserver"),
           ("SIGABRT", "subprocess"), ("SIGILL", "spawn")]


@pytest.mark.parametrize("name, start", CRASHES)
def test_crash_reaches_the_hub_before_the_process_dies(dpdb, name, start):
    child = dpdb.spawn("dpdb", "run", program("faults.py"), "crash", name, start)
    # The notice travels agent, hub, client; the program prints the child's end itself: either
    # may reach the terminal first.
    notice, ended = expect_all(
        child, r"pid (\d+) crashed with %s; `dpdb log \d+` shows its stacks" % name,
        r"child ended (\d+) (-?\d+)")
    crashed = int(notice.group(1))
    # The default action still happened: the process died of the signal.
    assert (int(ended.group(1)), int(ended.group(2))) == (crashed, -getattr(signal, name))
    states = {p["pid"]: p["state"] for p in ps(dpdb)}
    assert states[crashed] == "crashed: %s" % name
    log = dpdb.run("dpdb", "log", str(crashed))
    assert log.returncode == 0 and "crashed: %s" % name in log.stdout
    assert "in crash" in log.stdout and "faults.py" in log.stdout
    child.terminate(force=True)


def test_crash_leaves_the_programs_own_faulthandler_working(dpdb):
    """faulthandler enabled by the program itself, after dpdb's handlers (and, through
    PYTHONFAULTHANDLER, before them): both report, and the process still dies of the signal."""
    for env in ({"FAULTS_OWN_FAULTHANDLER": "1"}, {"PYTHONFAULTHANDLER": "1"}):
        child = dpdb.spawn("dpdb", "run", program("faults.py"), "crash", "SIGSEGV", "subprocess",
                           env=env)
        expect_all(child, r"Fatal Python error: Segmentation fault",
                   r"pid (\d+) crashed with SIGSEGV", r"child ended \d+ -11")
        child.terminate(force=True)


def test_ctrl_c_in_a_run_terminal_pauses_the_program(dpdb):
    child = dpdb.spawn("dpdb", "run", program("busy.py"))
    child.expect("busy started")
    # The worker has started (a Ctrl-C before its start-up would be Python's to handle).
    wait_until(lambda: len(ps_when_up(dpdb)) >= 2, "the worker to start")
    time.sleep(0.3)
    child.sendintr()
    child.expect(r"Program interrupted by Ctrl-C")
    child.expect(PROMPT)
    child.sendline("p rounds > 0")
    child.expect("True")
    child.expect(PROMPT)
    child.sendline("c")
    # The worker process did not die of the Ctrl-C: it ended normally, with status 0.
    child.expect(r"busy done True 0")
    child.expect(pexpect.EOF)


def test_global_breakpoint_in_an_imported_module_of_a_call_heavy_loop(dpdb):
    # On 3.11 the engine gives the module's functions (and closures made later) the patched code
    # and installs no frame evaluator ("swap mode"); the breakpoints must stop all the same,
    # after a change too.
    child = dpdb.spawn("dpdb", "run", program("swapjob.py"))
    child.expect("swapjob started")
    work = program("swapjob_work.py")
    line = line_of(work, "the swapped line")
    added = dpdb.run("dpdb", "break", "swapjob_work.py:%d" % line, "if", "i", ">=", "20000")
    assert added.returncode == 0, added.stderr
    child.expect(r"attached to session \d+")
    child.expect(PROMPT)
    child.sendline("p i >= 20000, 'value' in locals()")
    child.expect(r"\(True, False\)")
    child.expect(PROMPT)
    assert dpdb.run("dpdb", "break", "--clear").returncode == 0
    closure = line_of(work, "the closure's line")
    added = dpdb.run("dpdb", "break", "swapjob_work.py:%d" % closure)
    assert added.returncode == 0, added.stderr
    child.sendline("c")
    child.expect(r"swapjob_work.py\(%d\)scale\(\)" % closure)
    child.expect(PROMPT)
    child.sendline("p k")
    child.expect(r"\r\n3\r\n")
    child.expect(PROMPT)
    assert dpdb.run("dpdb", "break", "--clear").returncode == 0
    child.sendline("c")
    wait_until(lambda: "paused at" not in dpdb.run("dpdb", "ps").stdout, "the job runs on")
    child.terminate(force=True)


def test_ps_shows_exit_statuses_as_statuses_and_keeps_its_columns(dpdb):
    run = dpdb.spawn("dpdb", "run", program("recycled.py"))
    run.expect(r"recycled (\d+)")
    recycled = int(run.match.group(1))
    run.expect(PROMPT)
    done = dpdb.run("dpdb", "ps")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.search(r"└─ %d .* exited with status 155$" % recycled, done.stdout, re.M), \
        done.stdout
    assert "SIGPROF" not in done.stdout
    assert "paused at recycled.py:7 in a_function_whose_name_is_long_enough" in done.stdout
    # Every row's command starts in the header's COMMAND column, tree branches and long states
    # notwithstanding.
    column = lines[0].index("COMMAND")
    assert len(lines) >= 4, done.stdout
    for line in lines[1:]:
        # dpdb run starts the pythonX.Y it was built for.
        assert line[column:].startswith("python%d.%d recycled.py" % sys.version_info[:2]), \
            done.stdout

    # The paused worker's stack ends in its own code; the debugger's frames are there on request.
    worker = [p["pid"] for p in ps(dpdb) if p["state"].startswith("paused")][0]
    stacks = dpdb.run("dpdb", "stacks", str(worker)).stdout
    assert "in a_function_whose_name_is_long_enough" in stacks, stacks
    assert "bdb.py" not in stacks and "dpdb/_console.py" not in stacks, stacks
    assert re.search(r"paused by the debugger: \d+ frames of dpdb, pdb and bdb above are hidden",
                     stacks), stacks
    every = dpdb.run("dpdb", "stacks", "--debugger-frames", str(worker)).stdout
    assert "bdb.py" in every and "dpdb/_console.py" in every, every
    # Its main thread is a thread of its own, not the parent's it was forked from.
    threads = [p for p in json.loads(dpdb.run("dpdb", "stacks", "--json", str(worker)).stdout)
               if p["pid"] == worker][0]["stacks"]["threads"]
    assert [t["native_id"] for t in threads if t["name"] == "MainThread"] == [worker], threads
    run.sendline("c")
    run.expect("pool done")
    finish(run)


def test_xdist_workers_are_listed_by_their_names(dpdb):
    pytest.importorskip("xdist")
    run = dpdb.spawn("dpdb", "run", "--python", sys.executable, "-m", "pytest", "-q", "-n", "2",
                     "-p", "no:cacheprovider", program(os.path.join("xdist_suite", "pair.py")))
    run.expect(r"attached to session \d+: pid \d+ (gw\d)")
    run.expect(PROMPT)
    # The other worker names itself when xdist's handshake reaches it, which on a loaded machine
    # can come after the first one has paused.
    def both_named():
        listed = dpdb.run("dpdb", "ps").stdout
        return all(re.search(r"%s: python\S* -u -c" % worker, listed) for worker in ("gw0", "gw1"))

    wait_until(both_named, "both xdist workers listed by name")
    run.sendline("c")
    run.expect(r"attached to session \d+: pid \d+ (gw\d)")
    run.expect(PROMPT)
    run.sendline("c")
    run.expect("2 passed")
    finish(run)
