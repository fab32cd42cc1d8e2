"""A crowd of agents from one address, played by one process: `agent_crowd.py PORT KEY COUNT BOUND`.

Each agent dials until its handshake is through (an evicted or refused attempt is retried as the
agent's link retries: backoff from 50 ms to 2 s, with jitter) and keeps its connection. Once all
are in, prints "in SECONDS" and waits for a line on stdin: "again" closes every connection and
dials them all once more (the test restarted the hub meanwhile), "end" ends. The crowd runs in a
process of its own so that its ten thousand sockets, and the file limit raised for them, end with
it and never reach the test's own process."""

import asyncio
import hashlib
import hmac
import json
import random
import resource
import secrets
import struct
import sys
import time


async def read_frame(reader):
    (size,) = struct.unpack(">I", await reader.readexactly(4))
    return json.loads(await reader.readexactly(size))


def frame(message):
    data = json.dumps(message).encode()
    return struct.pack(">I", len(data)) + data


async def join(port, key, i, writers):
    delay = 0.05
    while True:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            challenge = await read_frame(reader)
            nonce = secrets.token_hex(16)
            text = "dpdb1|agent|%s|%s|" % (challenge["nonce"], nonce)
            mac = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
            writer.write(frame({"t": "hello", "v": challenge["v"], "role": "agent",
                                "nonce": nonce, "mac": mac,
                                "proc": {"pid": 800000 + i, "host": "node%d" % (i % 50)}}))
            if (await read_frame(reader))["t"] == "welcome":
                writers.append(writer)
                return
            writer.close()
            await writer.wait_closed()
        except (OSError, asyncio.IncompleteReadError):
            pass
        await asyncio.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 2, 2.0)


async def crowd(port, key, count, bound, writers):
    started = time.monotonic()
    await asyncio.wait_for(
        asyncio.gather(*(join(port, key, i, writers) for i in range(count))), bound)
    return time.monotonic() - started


async def close_all(writers):
    for writer in writers:
        writer.close()
    await asyncio.gather(*(writer.wait_closed() for writer in writers), return_exceptions=True)
    writers.clear()


async def main(port, key, count, bound):
    writers = []
    loop = asyncio.get_running_loop()
    while True:
        print("in %.1f" % await crowd(port, key, count, bound, writers), flush=True)
        order = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        await close_all(writers)
        if order != "again":
            return


if __name__ == "__main__":
    port, key, count, bound = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 3 * count), hard))
    asyncio.run(main(int(port), key.encode(), count, bound))
