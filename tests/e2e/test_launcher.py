"""Ranks started as torchrun starts them, without torch (which dev/test does not install:
docs/frameworks.md says why): a launcher gives each of three ranks RANK, LOCAL_RANK, GROUP_RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT, and the ranks meet in the launcher's barrier over TCP.
Rank 1 stops at breakpoint() in a session labelled with its rank while the others wait in the
barrier; `q` lets it run on and every rank passes; rank 2 stops before the next barrier, and `c`
lets the job end."""

from conftest import PROMPT, expect_all, finish, plain, program, stop_line

LAUNCHER = program("launcher/launch.py")
RANKS = 3


def label(rank):
    # [^\n]*, not .*: pexpect's `.` matches a newline, and would take the lines after.
    return (r"attached to session \d+: pid (\d+) \[group_rank=0,local_rank=%d,rank=%d,"
            r"world_size=%d\] [^\n]*rank.py" % (rank, rank, RANKS))


def test_a_rank_paused_while_the_others_wait_in_a_barrier(dpdb):
    run = dpdb.spawn("dpdb", "run", LAUNCHER, str(RANKS))
    run.expect(label(1))
    paused = int(run.match.group(1))
    run.expect(stop_line(r"barrier\(\"the first barrier\"\)"))
    run.expect(PROMPT)
    run.sendline("p rank, share")
    run.expect(r"\(1, 20\)")
    run.expect(PROMPT)

    # Every rank is a process of the job, tagged from the environment the launcher gave it.
    def every_rank(listing):
        return len([p for p in listing["processes"] if "RANK" in p["tags"]]) == RANKS

    ranks = {p["tags"]["RANK"]: p for p in dpdb.wait_ls(every_rank)["processes"]
             if "RANK" in p["tags"]}
    assert sorted(ranks) == [str(rank) for rank in range(RANKS)]
    for rank, process in ranks.items():
        assert process["tags"] == {"RANK": rank, "LOCAL_RANK": rank, "GROUP_RANK": "0",
                                   "WORLD_SIZE": str(RANKS)}
    assert ranks["1"]["pid"] == paused and ranks["1"]["sessions"]
    # The barrier holds the others while rank 1 is paused.
    assert "passed the first barrier" not in plain(run.logfile_read.getvalue())

    run.sendline("q")
    expect_all(run, *["rank %d passed the first barrier" % rank for rank in range(RANKS)],
               label(2), stop_line(r"barrier\(\"the second barrier\"\)"),
               r"\[2 pid \d+\] " + PROMPT)
    run.sendline("p rank, share")
    run.expect(r"\(2, 30\)")
    run.sendline("c")
    expect_all(run, *["rank %d done, share %d" % (rank, (rank + 1) * 10)
                      for rank in range(RANKS)],
               r"launcher: ranks exited with \[0, 0, 0\]")
    finish(run)
