"""dpdb run: a prompt from any process of the job, in the user's own terminal."""


from conftest import PROMPT, expect_all, finish, program, stop_line


def test_spawn_pool_workers_queue_and_switch(dpdb):
    child = dpdb.spawn("dpdb", "run", program("spawn_pool.py"))
    # The second worker stops too: it waits, and the user is told (before or after the first
    # one's location arrives).
    attached, paused = expect_all(child, r"attached to session (\d+): pid (\d+) SpawnPoolWorker",
                                  r"session (\d+) paused: pid \d+ SpawnPoolWorker",
                                  stop_line(r"return y \+ 1"))[:2]
    first = int(attached.group(1))
    second = int(paused.group(1))
    child.expect(PROMPT)
    child.sendline("p x, y")
    child.expect(r"\((1, 2|2, 4)\)")
    first_values = child.match.group(1)
    # The prompt counts who waits; `sessions` lists both.
    child.expect(r"\[%d pid \d+ \+1 waiting\] \(Pdb\) " % first)
    child.sendline("sessions")
    child.expect(r"SESSION\s+PID[^\r]*\r\n(.*)\[%d pid" % first)
    rows = [line.split() for line in child.match.group(1).split("\r\n") if line.strip()]
    assert sorted(int(row[0]) for row in rows) == sorted([first, second]), rows
    child.expect(PROMPT)
    child.sendline("switch %d" % second)
    child.expect(r"attached to session %d" % second)
    child.expect(PROMPT)
    child.sendline("p x, y")
    child.expect(r"\((1, 2|2, 4)\)")
    assert child.match.group(1) != first_values  # the other worker
    child.expect(PROMPT)
    child.sendline("c")
    # Back to the first one, which still waits where it stopped.
    child.expect(r"attached to session %d" % first)
    child.expect(PROMPT)
    child.sendline("c")
    expect_all(child, r"results \[3, 5\]", "main done")
    finish(child, 0)
