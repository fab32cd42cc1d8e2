"""A pre-fork server started without dpdb: the master listens, its two workers accept and
answer each line "N" with "2N", until the master is told to stop (SIGTERM)."""
import os
import signal
import socket
import sys
import time


def handle(line):
    answer = int(line) * 2  # server breakpoint here
    return answer


def serve(listener):
    listener.settimeout(0.5)  # Python code runs now and then, as in servers that check a flag
    while True:
        try:
            connection, _ = listener.accept()
        except socket.timeout:
            continue
        connection.settimeout(None)
        with connection, connection.makefile("rw") as stream:
            line = stream.readline()
            stream.write("%d\n" % handle(line))


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
workers = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        serve(listener)
    workers.append(pid)


def stop(number, frame):
    for worker in workers:
        os.kill(worker, signal.SIGTERM)
    for worker in workers:
        os.waitpid(worker, 0)
    print("master done", flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
print("listening", listener.getsockname()[1], "workers", *workers, flush=True)
while True:
    time.sleep(0.5)
