"""A rank of launch.py's job: it knows itself from its environment, as a torchrun rank does, and
meets the other ranks in the launcher's barrier twice. Rank 1 stops at breakpoint() before the
first, rank 2 before the second, while the others wait in it."""
import os
import socket


def barrier(name):
    address = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
    with socket.create_connection(address) as connection:
        connection.sendall(b"%s rank %s\n" % (name.encode(), os.environ["RANK"].encode()))
        assert connection.makefile("r").readline() == "go\n"
    print("rank %d passed %s" % (rank, name), flush=True)


if __name__ == "__main__":
    rank = int(os.environ["RANK"])
    share = (rank + 1) * 10
    if rank == 1:
        breakpoint()  # rank 1's breakpoint
    barrier("the first barrier")
    if rank == 2:
        breakpoint()  # rank 2's breakpoint
    barrier("the second barrier")
    print("rank %d done, share %d" % (rank, share), flush=True)
