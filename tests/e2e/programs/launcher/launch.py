"""A launcher as torchrun is one, without torch: starts N rank processes (argv[1]) of rank.py with
RANK, LOCAL_RANK, GROUP_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT in their environment, and
serves the barrier they meet in over TCP at MASTER_ADDR:MASTER_PORT: a round ends when every rank
has connected, and each is then answered. Exits with the first failing rank's status."""
import os
import socket
import subprocess
import sys
import threading

RANK_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rank.py")


def serve_barrier(server, world_size):
    while True:
        waiting = []
        while len(waiting) < world_size:
            connection, _ = server.accept()
            connection.makefile("r").readline()  # the rank's name: it has arrived
            waiting.append(connection)
        for connection in waiting:
            connection.sendall(b"go\n")
            connection.close()


if __name__ == "__main__":
    world_size = int(sys.argv[1])
    server = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=serve_barrier, args=(server, world_size), daemon=True).start()
    ranks = []
    for rank in range(world_size):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), GROUP_RANK="0",
                   WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(server.getsockname()[1]))
        ranks.append(subprocess.Popen([sys.executable, RANK_PROGRAM], env=env))
    statuses = [rank.wait() for rank in ranks]
    print("launcher: ranks exited with %s" % statuses, flush=True)
    sys.exit(next((status for status in statuses if status), 0))
