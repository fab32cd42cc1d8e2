"""A Ray task that raises: under `dpdb run --post-mortem` its worker opens a post-mortem session
before Ray turns the exception into a RayTaskError for the caller."""
import ray


@ray.remote
def ratio(x):
    return x / 0  # the task's failing line


if __name__ == "__main__":
    ray.init(num_cpus=1, include_dashboard=False)
    try:
        ray.get(ratio.remote(3))
    except ray.exceptions.RayTaskError as error:
        print("the caller got", type(error.cause).__name__, flush=True)
    ray.shutdown()
