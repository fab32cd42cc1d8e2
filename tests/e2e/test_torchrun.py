"""torch.distributed under torchrun and `dpdb run`, three ranks on CPU with the gloo backend:
torch.distributed.breakpoint(rank=1) stops rank 1 in a dpdb session at its caller while the others
wait in its barrier, for longer than the process groups' timeout; `q` lets every rank go on, and
each rank's groups have their own timeout back (torch alone leaves them raised to an hour);
a plain breakpoint() on rank 2 while the others wait in an all_reduce, then `c`, and every rank
gets the sum. dev/test installs torch in its frameworks venv when the disk has room for it
(docs/frameworks.md): this runs in a venv that has it, and skips elsewhere."""

import json
import os
import signal
import socket
import time

import pytest

from conftest import PROMPT, expect_all, finish, plain, program, stop_line

pytest.importorskip("torch.distributed")

JOB = program(os.path.join("frameworks", "torch_job.py"))
GROUP_TIMEOUT = 4  # seconds: the job's process groups' own timeout
PAUSED_FOR = 2 * GROUP_TIMEOUT
# Each rank and torchrun import torch (seconds each on a small machine).
TORCH_TIMEOUT = 120
RANKS = 3


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def torchrun(dpdb):
    run = dpdb.spawn("dpdb", "run", "-m", "torch.distributed.run", "--nproc-per-node",
                     str(RANKS), "--master-port", str(free_port()), JOB, str(GROUP_TIMEOUT),
                     timeout=TORCH_TIMEOUT)
    yield run
    # torchrun starts each rank in a session of its own: a test that fails leaves none behind,
    # each process of the job (as the hub lists them) killed, then the run's process group.
    if run.isalive():
        listed = dpdb.run("dpdb", "ps", "--json")
        for process in json.loads(listed.stdout or "[]"):
            dpdb.track(process["pid"])
    try:
        os.killpg(run.pid, signal.SIGKILL)
    except OSError:
        pass


def test_a_rank_paused_at_torch_distributed_breakpoint_and_at_breakpoint(dpdb, torchrun):
    run = torchrun
    # pexpect's `.` matches a newline too: [^\n]* keeps the match on its line, which a `.*`
    # left only when the next lines came in a later read.
    run.expect(r"attached to session \d+: pid \d+ \[group_rank=0,local_rank=1,rank=1,"
               r"world_size=3\] [^\n]*torch_job.py")
    run.expect(r"torch: the process groups' timeouts are raised while the ranks wait at "
               r"torch.distributed.breakpoint\(\), and set back once it returns")
    # The prompt is at the line that called it, not inside torch.
    run.expect(r"torch_job.py\(\d+\)<module>\(\)\r\n-> dist.breakpoint\(rank=1\)")
    run.expect(PROMPT)
    time.sleep(PAUSED_FOR)
    # A call into torch at the prompt. The rank used to abort at exit in some runs (more often
    # with this call): the frame it stopped in, holding the process group, outlived the
    # session (docs/architecture.md).
    run.sendline("p rank, dist.get_world_size()")
    run.expect(r"\(1, 3\)")
    run.expect(PROMPT)
    # The other ranks are still in the barrier, past their groups' own timeout.
    assert "timeout 0:" not in plain(run.logfile_read.getvalue())
    run.sendline("q")
    # Each rank says its timeout, and rank 2 stops, in whatever order their output comes.
    expect_all(run, *["rank %d timeout 0:00:%02d" % (rank, GROUP_TIMEOUT)
                      for rank in range(RANKS)],
               r"attached to session \d+: pid \d+ \[group_rank=0,local_rank=2,rank=2,",
               stop_line(r"dist.all_reduce\(total\)"), r"\[2 pid \d+\] " + PROMPT)
    run.sendline("p total.item()")
    run.expect(r"\r\n3\r\n")
    run.sendline("c")
    expect_all(run, *("rank %d sum 6" % rank for rank in range(RANKS)))
    finish(run)
