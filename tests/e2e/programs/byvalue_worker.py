"""A worker that runs a function it did not import: unpickled by value (`early`: then makes the
file argv[2].held and waits for the file argv[2] before it calls it), or compiled from source
under the file name it came from. `bare`: as on a machine where dpdb is not installed (started with
no agent, and dpdb cannot be imported)."""
import os
import pickle
import sys
import time

if __name__ == "__main__":
    payload = sys.stdin.buffer.read()
    if sys.argv[1] == "bare":
        assert "dpdb" not in sys.modules
        sys.modules["dpdb"] = None  # import dpdb raises ImportError
    if sys.argv[1] == "compiled":
        path = payload.decode()
        with open(path) as f:
            namespace = {"__name__": "byvalue"}
            exec(compile(f.read(), path, "exec"), namespace)
        task = namespace["task"]
    else:
        task = pickle.loads(payload)
    if sys.argv[1] == "early":
        open(sys.argv[2] + ".held", "w").close()
        for _ in range(600):
            if os.path.exists(sys.argv[2]):
                break
            time.sleep(0.05)
    print(sys.argv[1], "result", task(21), flush=True)
