"""Every Python process of a job carries the agent without code changes: os.fork, multiprocessing
(fork, spawn, forkserver), subprocess, ProcessPoolExecutor and a double-forked daemon each register
as a process of their own, with their parent's pid, and their breakpoint() gives a prompt."""

import pytest

from conftest import PROMPT, expect_all, finish, program, stop_line

KINDS = ["fork", "mp-fork", "mp-spawn", "mp-forkserver", "subprocess", "pool", "daemon"]


def by_pid(listing):
    return {p["pid"]: p for p in listing["processes"]}


def ancestry(processes, pid, stop):
    """pids from pid up through the registered parents until stop (or an unregistered parent)."""
    chain = [pid]
    while chain[-1] != stop and chain[-1] in processes and len(chain) < 10:
        chain.append(processes[chain[-1]]["ppid"])
    return chain


@pytest.mark.parametrize("kind", KINDS)
def test_child_registers_and_stops(dpdb, kind):
    child = dpdb.spawn("dpdb", "run", program("processes.py"), kind)
    label = "subprocess" if kind == "subprocess" else kind
    patterns = [r"main pid (\d+)\r\n",
                r"child %s pid (\d+) ppid \d+\r\n" % label,
                r"attached to session (\d+): pid (\d+)",
                stop_line("return marker")]
    if kind == "daemon":
        patterns.append(r"intermediate pid (\d+) ppid (\d+)\r\n")
    matches = expect_all(child, *patterns)
    main_pid = int(matches[0].group(1))
    child_pid = int(matches[1].group(1))
    sid = int(matches[2].group(1))
    if kind == "daemon":
        dpdb.track(child_pid)  # nobody waits for it
    assert int(matches[2].group(2)) == child_pid  # the prompt is the child's
    assert child_pid != main_pid
    child.expect(PROMPT)

    # While it waits, another command sees the child as a process of its own, and its session.
    def complete(listing):
        processes = by_pid(listing)
        if kind == "daemon":  # its parent has exited: the hub forgets it
            return child_pid in processes and int(matches[4].group(1)) not in processes
        return child_pid in processes and ancestry(processes, child_pid, main_pid)[-1] == main_pid

    listing = dpdb.wait_ls(complete)
    processes = by_pid(listing)
    me = processes[child_pid]
    assert me["sessions"] == [sid]
    assert me["run"] == processes[main_pid]["run"]
    chain = ancestry(processes, child_pid, main_pid)
    if kind in ("fork", "mp-fork", "mp-spawn", "subprocess", "pool"):
        assert chain == [child_pid, main_pid]
    elif kind == "mp-forkserver":
        # The forkserver's children are the forkserver's: it is registered too, under main.
        assert len(chain) == 3 and chain[-1] == main_pid
        assert "forkserver" in " ".join(processes[chain[1]]["argv"])
    else:
        # The daemon's parent, the intermediate process, is gone; it was main's child.
        intermediate, its_parent = int(matches[4].group(1)), int(matches[4].group(2))
        assert me["ppid"] == intermediate and its_parent == main_pid
    [session] = [s for s in listing["sessions"] if s["sid"] == sid]
    assert session["pid"] == child_pid
    assert session["function"] == "stop_here" and session["attached"] is True

    # The prompt really is in that process.
    child.sendline("p os.getpid(), label")
    child.expect(r"\(%d, '%s'\)" % (child_pid, "mp-" + kind[3:] if kind.startswith("mp-")
                                   else label))
    child.expect(PROMPT)
    child.sendline("c")
    outcome = expect_all(child, "child %s done" % label, r"main done: (\S+)")[1]
    assert outcome.group(1) in ("0", "daemon", "pool")
    finish(child, 0)


def test_the_agents_threads_do_not_make_fork_warn(dpdb):
    """CPython 3.12+ warns at fork() when the process has other threads, counting the agent's;
    dpdb hides the warning only when every other thread is its own."""
    child = dpdb.spawn("dpdb", "run", program("fork_warning.py"))
    child.expect(r"python \((\d+), (\d+)\)")
    version = (int(child.match.group(1)), int(child.match.group(2)))
    output = child.before
    assert "alone forked quietly" in output, output
    if version >= (3, 12):
        # With a thread of the program's own, the fork warns exactly as without dpdb.
        assert "with a thread warned: This process" in output, output
    else:
        assert "with a thread forked quietly" in output, output
    finish(child)
