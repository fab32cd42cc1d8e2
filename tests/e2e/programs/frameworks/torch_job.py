"""A torch.distributed job for torchrun, on CPU with the gloo backend, its process groups'
timeout short (argv[1], seconds): every rank calls torch.distributed.breakpoint(rank=1) (rank 1
stops, the others wait in its barrier), then says its group's timeout; then, the timeout raised
as docs/frameworks.md says, rank 2 stops at a plain breakpoint() while the others wait for it in
an all_reduce; every rank says the sum."""
import datetime
import os
import sys

import torch
import torch.distributed as dist


def group_timeout():
    return dist.group.WORLD._get_backend(torch.device("cpu")).options._timeout


if __name__ == "__main__":
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=float(sys.argv[1])))
    dist.breakpoint(rank=1)  # every rank's call
    print("rank %d timeout %s" % (rank, group_timeout()), flush=True)
    # A collective's timeout is fixed as it starts: one that others wait in while a rank is
    # paused at a plain breakpoint() must be long enough for the time spent at the prompt.
    dist.set_timeout(datetime.timedelta(minutes=10))
    total = torch.tensor([rank + 1])
    if rank == 2:
        breakpoint()  # rank 2's breakpoint
    dist.all_reduce(total)
    print("rank %d sum %d" % (rank, total.item()), flush=True)
    dist.destroy_process_group()
