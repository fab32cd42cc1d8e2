"""A TCP relay that puts a network between a dpdb client and its hub, on loopback only.

    python bench/latency/relay.py --to 127.0.0.1:PORT [--delay 0.05]

Listens on 127.0.0.1 (a free port, printed as `relay listening on 127.0.0.1:N`) and forwards each
connection to --to. Every chunk read on either side is held `delay` seconds before it is written
on (0.05: 100 ms round trip), in order, so a client through it sees what a client 100 ms away
sees; the bytes themselves are untouched (TLS runs end to end, the channel binding holds).

It counts round trips as the client makes them: a chunk from the client starts a new round trip
when the hub has delivered something to the client since the client's last chunk (the first
chunk starts the first). What a client writes in one go — TLS Finished, hello and a request —
is one round trip however many chunks it arrives in, and a client that waits for each answer
makes one per question. Counting by what was delivered, never by time, holds on a loaded
machine. The counts, per connection and in all, are printed on SIGUSR1 and at exit, and
`Relay.round_trips()` gives them to a test (tests/e2e/test_round_trips.py).
"""
import argparse
import heapq
import os
import signal
import socket
import sys
import threading
import time


class _Link:
    """One relayed connection: two pumps, each holding every chunk `delay` seconds."""

    def __init__(self, relay, client, hub):
        self.relay = relay
        self.client = client
        self.hub = hub
        self.lock = threading.Lock()
        self.round_trips = 0
        self.answered = True  # the client's first chunk starts the first round trip
        for sock in (client, hub):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=self.pump, args=(client, hub, True), daemon=True).start()
        threading.Thread(target=self.pump, args=(hub, client, False), daemon=True).start()

    def pump(self, source, sink, from_client):
        queue = []  # (due, sequence, chunk); a None chunk is the end
        ready = threading.Condition()
        sequence = 0

        def deliver():
            while True:
                with ready:
                    while not queue or queue[0][0] > time.monotonic():
                        ready.wait(None if not queue else queue[0][0] - time.monotonic())
                    _, _, chunk = heapq.heappop(queue)
                if chunk is None:
                    try:
                        sink.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    return
                if not from_client:
                    # Before the write: the client's answer to it may be read at once.
                    with self.lock:
                        self.answered = True
                try:
                    sink.sendall(chunk)
                except OSError:
                    return

        writer = threading.Thread(target=deliver, daemon=True)
        writer.start()
        while True:
            try:
                chunk = source.recv(65536)
            except OSError:
                chunk = b""
            if chunk and from_client:
                with self.lock:
                    if self.answered:
                        self.answered = False
                        self.round_trips += 1
            with ready:
                sequence += 1
                heapq.heappush(queue, (time.monotonic() + self.relay.delay, sequence,
                                       chunk or None))
                ready.notify()
            if not chunk:
                break
        writer.join()


class Relay:
    """The relay on a thread of its own: `port` to dial, `round_trips()` to read."""

    def __init__(self, target, delay=0.05):
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.delay = delay
        self.links = []
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                hub = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            self.links.append(_Link(self, client, hub))

    def round_trips(self):
        """The round trips of every connection so far, in the order they were accepted."""
        return [link.round_trips for link in list(self.links)]

    def reset(self):
        self.links = []

    def close(self):
        self.server.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--to", required=True, help="HOST:PORT of the hub")
    parser.add_argument("--delay", type=float, default=0.05, help="seconds each way")
    args = parser.parse_args()
    relay = Relay(args.to, args.delay)

    def report(*_):
        counts = relay.round_trips()
        print("round trips: %d over %d connection(s) %s" % (sum(counts), len(counts), counts),
              flush=True)

    signal.signal(signal.SIGUSR1, report)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("relay listening on 127.0.0.1:%d (pid %d)" % (relay.port, os.getpid()), flush=True)
    try:
        while True:
            signal.pause()
    except (KeyboardInterrupt, SystemExit):
        report()


if __name__ == "__main__":
    main()
