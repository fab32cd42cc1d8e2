"""A small scoring service in the shape of FATE's (seeds/000): an HTTP server whose request
handler starts a job process, which scores the data with a multiprocessing pool. The code you
need to stop in runs two processes below the one you started, with no terminal of its own.

    dpdb run examples/http_pool_service/service.py --port 8765
    curl 'http://127.0.0.1:8765/score?rows=8'      # from another terminal

`--trigger` sends that request itself and `--once` stops the server after it.
"""

import argparse
import json
import multiprocessing
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

WEIGHTS = (0.4, -1.5, 2.25)


def score_chunk(chunk):
    """The algorithm code: runs in a pool worker of the job process."""
    index, rows = chunk
    total = 0.0
    for row in rows:
        features = (row % 7, row % 3, 1.0)
        value = sum(w * f for w, f in zip(WEIGHTS, features))
        if index == 1:
            breakpoint()  # the line the user wants to stop at, deep inside the job
        total += value
    return index, total


def run_job(rows, results):
    """The job process: splits the data and scores it with a pool of workers."""
    chunks = [(i, list(range(i * 4, i * 4 + 4))) for i in range((rows + 3) // 4)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        scores = dict(pool.map(score_chunk, chunks, chunksize=1))
    results.put({"rows": rows, "chunks": len(chunks), "score": round(sum(scores.values()), 3)})


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        if url.path != "/score":
            self.send_error(404, "try /score?rows=N")
            return
        rows = int(parse_qs(url.query).get("rows", ["8"])[0])
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        job = context.Process(target=run_job, args=(rows, results), name="score-job")
        job.start()
        body = json.dumps(results.get()).encode()
        job.join()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if self.server.once:
            threading.Thread(target=self.server.shutdown, daemon=True).start()


def trigger(port, rows):
    with urllib.request.urlopen("http://127.0.0.1:%d/score?rows=%d" % (port, rows)) as reply:
        print("response:", reply.read().decode(), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--once", action="store_true", help="stop after one request")
    parser.add_argument("--trigger", action="store_true", help="send one request ourselves")
    parser.add_argument("--rows", type=int, default=8)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.once = args.once
    print("scoring service on http://127.0.0.1:%d/score" % server.server_address[1], flush=True)
    if args.trigger:
        threading.Thread(target=trigger, args=(server.server_address[1], args.rows)).start()
    server.serve_forever()
    server.server_close()


if __name__ == "__main__":
    main()
