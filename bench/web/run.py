"""`dpdb web` at 1,000 and 10,000 processes: bench/web/run [SIZES...] (default 1000 10000).

For each size: a standalone hub (`dpdb hub`), that many agents speaking the real protocol from
this process (no Python program behind them: the job of bench/hub_scale, eight processes per
host with RANK, LOCAL_RANK, WORLD_SIZE and a role), `dpdb web` on that hub, and Debian's chromium
driven by Playwright (the system browser, as tests/e2e/test_web.py). Measured in the page:

  first render  from the navigation's start to the frame in which the tree's counts show all
                N processes (the page loaded, its WebSocket open, the snapshot received, laid
                out and the rows in view drawn)
  update        from an agent's session_open leaving this process to the frame in which that
                process shows as paused on the page (hub, dpdb web, WebSocket, the page's
                layout of all N rows and the rows in view drawn); the median of ROUNDS, each a
                different process in view
  all lanes     from the first of N logpoint messages, one from each process, leaving this
                process to the frame in which the timeline has a lane for each (its lanes'
                scroll container N lanes high; the lanes in view drawn)
  one more      then one more message, to the frame in which its lane (in view) shows it

Times of a frame are read by a check run on every animation frame (Playwright's raf polling),
so each is late by at most one frame (about 16 ms). Needs playwright (pip) and chromium."""
import hashlib
import hmac
import json
import os
import resource
import secrets
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from dpdb_bench import dpdb_executable, private_environment, stop, wait_for  # noqa: E402

ROUNDS = 5
PER_HOST = 8
FIRST_PID = 700000  # above any pid_max: no live process claimed


WATCH = """
window.seen = {};
window.watch = (key, done, time) => {
  const check = () => {
    if (done()) window.seen[key] = time();
    else requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
};
"""


def frame(payload):
    data = json.dumps(payload).encode()
    return struct.pack(">I", len(data)) + data


def read_frame(sock):
    def exactly(size):
        data = b""
        while len(data) < size:
            more = sock.recv(size - len(data))
            if not more:
                raise SystemExit("the hub closed an agent's connection")
            data += more
        return data
    size, = struct.unpack(">I", exactly(4))
    return json.loads(exactly(size))


def listening(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        return probe.connect_ex(path) == 0


def agent(path, secret, i, agents):
    """One agent past the handshake, describing process i of the job."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(path)
    challenge = read_frame(sock)
    nonce = secrets.token_hex(16)
    mac = hmac.new(secret, ("dpdb1|agent|%s|%s|" % (challenge["nonce"], nonce)).encode(),
                   hashlib.sha256).hexdigest()
    proc = {"pid": FIRST_PID + i, "ppid": 1, "host": "node%04d" % (i // PER_HOST),
            "argv": ["python", "/srv/job/train.py", "--rank", str(i)], "python": "3.12.1",
            "tags": {"RANK": str(i), "LOCAL_RANK": str(i % PER_HOST), "WORLD_SIZE": str(agents),
                     "role": "loader" if i % 100 == 0 else "trainer"}}
    sock.sendall(frame({"t": "hello", "v": challenge["v"], "role": "agent", "nonce": nonce,
                        "mac": mac, "proc": proc}))
    welcome = read_frame(sock)
    if welcome["t"] != "welcome":
        raise SystemExit("the hub refused agent %d: %s" % (i, welcome))
    return sock


def log_line(text):
    return frame({"t": "log_lines", "lines": [
        {"time": time.time(), "text": text, "thread": "MainThread", "tid": 1}]})


def started(argv, env, **options):
    return subprocess.Popen(argv, env=env, start_new_session=True, **options)


def measure(dpdb, env, browser, agents):
    path = os.path.join(env["XDG_RUNTIME_DIR"], "hub-%s.sock" % secrets.token_hex(4))
    # Its store beside its socket, as bench/hub_scale's: a fresh one for each size.
    hub = started([dpdb, "hub", "--socket", path, "--state-dir", path + ".state"], env,
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sockets, web = [], None
    try:
        wait_for(lambda: os.path.exists(path + ".token") and listening(path), "the hub")
        with open(path + ".token") as token:
            secret = token.read().strip().encode()
        for i in range(agents):
            sockets.append(agent(path, secret, i, agents))
        web = started([dpdb, "web", "--hub", "unix:" + path], env, stdout=subprocess.PIPE,
                      stderr=subprocess.DEVNULL, text=True)
        url = web.stdout.readline().split("open ", 1)[1].strip()
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(120000)
        # Watchers run in the page before its own scripts (an init script is not the page's,
        # so its policy does not stop it): each notes the frame in which it sees what it waits
        # for, with no round trip to this process in between.
        page.add_init_script(WATCH + "watch('first', () => document.getElementById('counts')"
                             "?.textContent.startsWith('%d live'), () => performance.now());"
                             % agents)
        page.goto(url, wait_until="commit")
        first = page.wait_for_function("() => window.seen.first").json_value()
        updates = []
        for i in range(ROUNDS):  # the first host's processes: in view at the top
            selector = '.process[data-pid="%d"]' % (FIRST_PID + i)
            page.wait_for_selector(selector)
            page.evaluate("(selector) => watch(selector, () => document.querySelector(selector)"
                          "?.dataset.state === 'paused', () => Date.now())", selector)
            sent = time.time() * 1000
            sockets[i].sendall(frame({"t": "session_open", "sid": 1, "info": {
                "thread": "MainThread", "tid": 1, "file": "/srv/job/train.py", "line": 42,
                "function": "step"}}))
            shown = page.wait_for_function("(key) => window.seen[key]", arg=selector)
            updates.append(shown.json_value() - sent)
        drawn = page.locator("#tree .process").count()

        # The timeline: a logpoint message from every process (a lane each), then one more.
        # Lanes are virtualized: all N are there once their scroll container is N lanes high.
        page.evaluate("(n) => watch('lanes', () => document.querySelector('#timeline .lanes')"
                      ".scrollHeight >= n * 40, () => Date.now())", agents)
        sent = time.time() * 1000
        for i, sock in enumerate(sockets):
            sock.sendall(log_line("step %d" % i))
        lanes = page.wait_for_function("() => window.seen.lanes").json_value() - sent
        newest = '#timeline .lane[data-pid="%d"] .newest' % FIRST_PID
        page.evaluate("(newest) => watch('message', () => document.querySelector(newest)"
                      "?.textContent === 'one more', () => Date.now())", newest)
        sent = time.time() * 1000
        sockets[0].sendall(log_line("one more"))
        message = page.wait_for_function("() => window.seen.message").json_value() - sent
        page.close()
        return first, statistics.median(updates), max(updates), drawn, lanes, message
    finally:
        if web:
            stop(web)
        for sock in sockets:
            sock.close()
        stop(hub)


def main():
    sizes = [int(size) for size in sys.argv[1:]] or [1000, 10000]
    chromium = shutil.which("chromium")
    if not chromium:
        sys.exit("no chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit[1], limit[1]))
    if limit[1] < max(sizes) + 100:
        sys.exit("the open files limit (%d) is below %d agents" % (limit[1], max(sizes)))
    dpdb = dpdb_executable()
    print("| processes | first render (ms) | update, median of %d (ms) | update, worst (ms) "
          "| process rows drawn | a message from each: all lanes (ms) | one more (ms) |" % ROUNDS)
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with private_environment() as env, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=["--no-sandbox"] if os.geteuid() == 0 else [])
        try:
            for agents in sizes:
                print("| %d | %.0f | %.0f | %.0f | %d | %.0f | %.0f |"
                      % ((agents,) + measure(dpdb, env, browser, agents)), flush=True)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
