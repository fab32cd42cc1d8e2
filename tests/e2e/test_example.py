"""The example service (examples/http_pool_service): a request to it stops in a pool worker of
the job process its handler starts, two processes below the one `dpdb run` started; the prompt
is in this terminal, and the request is answered once the user lets the worker go."""

import json
import os
import threading
import urllib.request

from conftest import PROMPT, expect_all, finish

SERVICE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "http_pool_service",
                       "service.py")
SERVICE = os.path.abspath(SERVICE)


def test_request_stops_in_a_pool_worker_of_the_job(dpdb):
    run = dpdb.spawn("dpdb", "run", SERVICE, "--port", "0", "--once")
    run.expect(r"scoring service on http://127\.0\.0\.1:(\d+)/score")
    port = int(run.match.group(1))
    answer = {}

    def request():
        with urllib.request.urlopen("http://127.0.0.1:%d/score?rows=8" % port, timeout=60) as r:
            answer["body"] = json.loads(r.read().decode())

    client = threading.Thread(target=request, daemon=True)
    client.start()
    run.expect(r"attached to session (\d+): pid (\d+) \S+, thread MainThread, at service\.py:\d+"
               r" in score_chunk\(\)")
    sid, worker = int(run.match.group(1)), int(run.match.group(2))
    run.expect(PROMPT)
    # The worker is a child of the job process, which is a child of the service.
    processes = {p["pid"]: p for p in dpdb.ls()["processes"]}
    job = processes[worker]["ppid"]
    assert job in processes and job != worker
    service = processes[job]["ppid"]
    assert processes[service]["argv"][1:] == [SERVICE, "--port", "0", "--once"]
    # The first row of the second chunk: row 4, weighted as the service does.
    run.sendline("p index, row, round(value, 2)")
    run.expect(r"\(1, 4, %s\)" % round(0.4 * (4 % 7) - 1.5 * (4 % 3) + 2.25 * 1.0, 2))
    run.expect(PROMPT)
    run.sendline("u")
    run.expect(r"multiprocessing/pool\.py")
    run.expect(PROMPT)
    # The worker stops once per row of its chunk; `q` lets it run on without stopping again.
    run.sendline("q")
    expect_all(run, "no longer debugging process %d" % worker, "session %d " % sid)
    client.join(timeout=60)
    assert answer["body"] == {"rows": 8, "chunks": 2, "score": answer["body"]["score"]}
    finish(run, 0)
