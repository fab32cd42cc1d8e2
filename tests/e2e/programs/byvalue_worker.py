"""A worker that runs a function it did not import: unpickled by value, or compiled from source
under the file name it came from."""
import pickle
import sys

if __name__ == "__main__":
    payload = sys.stdin.buffer.read()
    if sys.argv[1] == "pickled":
        task = pickle.loads(payload)
    else:
        path = payload.decode()
        with open(path) as f:
            namespace = {"__name__": "byvalue"}
            exec(compile(f.read(), path, "exec"), namespace)
        task = namespace["task"]
    print(sys.argv[1], "result", task(21), flush=True)
