"""A job of two ranks, the shape of a distributed training job: rank 1 stops at a breakpoint."""
import multiprocessing as mp
import os


def train(rank):
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = "2"
    loss = 1.0 / (rank + 1)
    if rank == 1:
        breakpoint()
    return rank, loss


if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:
        print("losses", sorted(pool.map(train, [0, 1], chunksize=1)), flush=True)
    print("job done", flush=True)
