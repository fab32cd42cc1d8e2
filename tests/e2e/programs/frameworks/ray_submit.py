"""A Ray job submitted to a cluster that runs already (ray.init(address="auto")), from a process
that does not carry dpdb: its task stops at breakpoint() in a worker of the cluster."""
import ray


@ray.remote
def square(x):
    y = x * x
    breakpoint()  # the submitted task's breakpoint
    return y


if __name__ == "__main__":
    ray.init(address="auto")
    print("task", ray.get(square.remote(6)), flush=True)
