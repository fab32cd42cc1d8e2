"""A program that keeps working until told to stop, with a worker process that does too."""
import multiprocessing as mp
import time


def work(seconds):
    end = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < end:
        rounds += 1  # the busy loop
        time.sleep(0.01)
    return rounds


if __name__ == "__main__":
    worker = mp.get_context("spawn").Process(target=work, args=(6,), name="worker")
    worker.start()
    print("busy started", flush=True)
    rounds = work(4)
    worker.join()
    print("busy done", rounds > 0, worker.exitcode, flush=True)
