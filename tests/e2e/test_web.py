"""`dpdb web`: the job in a real browser (Debian's chromium driven by Playwright's Python client,
pointed at the system browser), and its access rules spoken raw over HTTP."""

import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys

import pexpect
import pytest

from conftest import DPDB, PROMPT, STOPS_ON_CALL, TIMEOUT, finish, line_of, program, wait_until
from test_hub import frame
from test_remote import two_hosts  # noqa: F401 (a fixture: two network namespaces)
from test_scale import AGENTS, crowd  # noqa: F401 (a fixture: a hub with a crowd of agents)

JOB = program("web_job.py")
HOSTILE = "<script>alert(1)</script>"
CHROMIUM = shutil.which("chromium")
SCREENSHOTS = os.environ.get("DPDB_SCREENSHOTS")  # a folder (docs/) to keep the page's pictures in


def start_web(dpdb, *args, env=None):
    """`dpdb web` on the job's hub: the child and the URL it printed."""
    web = dpdb.spawn("dpdb", "web", *args, env=env)
    web.expect(r"dpdb web: open (https?://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]+))\r\n")
    return web, web.match.group(1), int(web.match.group(2)), web.match.group(3)


def start_job(dpdb):
    """web_job.py under `dpdb run`, with worker-1 paused at its breakpoint() and the run's
    console at its prompt; returns the run and the file that ends the other workers."""
    stop_file = os.path.join(dpdb.root, "stop")
    run = dpdb.spawn("dpdb", "run", JOB, stop_file, HOSTILE)
    run.expect(PROMPT)
    return run, stop_file


def live_pids(dpdb):
    return {p["pid"]: p for p in dpdb.ls()["processes"]}


def wait_for_the_named_workers(dpdb):
    # A worker is listed at its fork, and named a moment later by multiprocessing's bootstrap.
    wait_until(lambda: sorted(p.get("process_name", "") for p in live_pids(dpdb).values())
               == ["", "worker-0", "worker-1", "worker-2"],
               "the main process and its 3 named workers listed")


@pytest.fixture
def browser():
    if CHROMIUM is None:
        pytest.skip("no chromium: the browser tests need Debian's (apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="no playwright: the browser tests need its Python client (pip install playwright)")
    # Playwright's own 5 s bound on each expectation is short for a loaded 2-core CI machine.
    sync_api.expect.set_options(timeout=TIMEOUT * 1000)
    with sync_api.sync_playwright() as playwright:
        # As root (CI's containers) chromium refuses to run with its sandbox.
        launched = playwright.chromium.launch(executable_path=CHROMIUM,
                                              args=["--no-sandbox"] if os.geteuid() == 0 else [])
        try:
            yield launched
        finally:
            launched.close()


def test_the_tree_is_pushed_live_and_what_peers_sent_is_text(dpdb, browser):
    from playwright.sync_api import expect

    run, stop_file = start_job(dpdb)
    wait_for_the_named_workers(dpdb)
    processes = live_pids(dpdb)
    session = dpdb.ls()["sessions"][0]
    worker = session["pid"]
    # The line after breakpoint(), or the call itself from 3.13 on.
    stop_line = line_of(JOB, "worker-1 stops here") - (1 if STOPS_ON_CALL else 0)
    assert session["line"] == stop_line, session

    web, url, _, _ = start_web(dpdb)
    page = browser.new_page(viewport={"width": 1100, "height": 420})
    page.set_default_timeout(TIMEOUT * 1000)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(url)
    assert page.url.endswith("/") and "token" not in page.url  # the token left the address bar

    for pid in processes:
        expect(page.locator('.process[data-pid="%d"]' % pid)).to_have_count(1)
    paused = page.locator('.process[data-pid="%d"]' % worker)
    expect(paused).to_have_attribute("data-state", "paused")
    expect(paused.locator(".where")).to_have_text(
        re.compile(r"paused at .*web_job\.py:%d in work$" % stop_line))
    expect(page.locator(".host .title")).to_have_text(re.compile(r"\(4\)$"))
    expect(page.locator("#counts")).to_have_text(
        re.compile(r"^4 live: 3 running, 1 paused, 0 unreachable;"))
    # The command line holds markup: shown as the characters it is, never run.
    argv = page.locator('.process[data-pid="%d"] .argv' % worker)
    expect(argv).to_contain_text(HOSTILE)
    assert page.locator("#tree script").count() == 0
    assert dialogs == []
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "web-tree.png"))

    # Pushed, not reloaded: the worker resumes, then the workers and the job end.
    run.sendline("c")
    expect(paused).to_have_attribute("data-state", "running")
    open(stop_file, "w").close()
    for pid in processes:
        expect(page.locator('.process[data-pid="%d"]' % pid)).to_have_attribute(
            "data-state", "exited")
    expect(page.locator('.process[data-pid="%d"] .state' % worker)).to_have_text("exited with 0")
    finish(run)
    assert dialogs == []
    page.close()
    web.terminate(force=True)


def attach_from_another_socket(page, sid):
    """What another page's WebSocket is told when it asks to attach to `sid` (the page's own
    button is disabled for a held session: this asks dpdb web itself); that page then closes."""
    return page.evaluate("""(sid) => new Promise((resolve) => {
        const ws = new WebSocket("ws://" + location.host + "/ws");
        ws.onopen = () => ws.send(JSON.stringify({t: "attach", sid, cols: 80}));
        ws.onmessage = (event) => {
            const message = JSON.parse(event.data);
            if (message.t !== "snapshot" && message.t !== "event") {
                ws.close();
                resolve(message);
            }
        };
    })""", sid)


def test_a_console_breakpoints_the_timeline_and_stacks_from_the_page(dpdb, browser):
    from playwright.sync_api import expect

    run, stop_file = start_job(dpdb)
    wait_for_the_named_workers(dpdb)
    session = dpdb.ls()["sessions"][0]
    sid, worker = session["sid"], session["pid"]
    web, url, _, _ = start_web(dpdb)
    page = browser.new_page(viewport={"width": 1400, "height": 700})
    page.set_default_timeout(TIMEOUT * 1000)
    page.goto(url)

    # dpdb run's terminal holds the session: shown so, and not taken from it.
    thread = page.locator('.thread[data-sid="%d"]' % sid)
    expect(thread).to_have_attribute("data-held", "elsewhere")
    expect(thread.locator("button.open-console")).to_be_disabled()
    refused = attach_from_another_socket(page, sid)
    assert refused["t"] == "error" and "held by another client" in refused["message"], refused
    run.sendline("p 6 * 7")
    run.expect("42")
    run.expect(PROMPT)

    # Global breakpoints: a logpoint set from the page, where it is armed, then cleared.
    wait_line = line_of(JOB, "os.access(stop_file")
    panel = page.locator("#breakpoints")
    panel.locator('input[name="spec"]').fill("web_job.py:%d" % wait_line)
    panel.locator('input[name="log"]').fill("waiting {index}")
    panel.locator('button[type="submit"]').click()
    row = panel.locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator(".standing")).to_have_text(re.compile(r"^armed in [1-4] of 4"))
    # Its messages on the timeline: a lane for each waiting worker, in the order of their times.
    for pid, process in live_pids(dpdb).items():
        if process.get("process_name") not in ("worker-0", "worker-2"):
            continue
        lane = page.locator('#timeline .lane[data-pid="%d"]' % pid)
        said = "waiting " + process["process_name"][-1]
        expect(lane.locator(".newest")).to_have_text(said)
        expect(lane.locator(".mark.log").first).to_have_attribute(
            "title", re.compile(": %s$" % said))
        times = [float(t) for t in lane.locator(".mark").evaluate_all(
            "marks => marks.map((mark) => mark.dataset.time)")]
        assert times == sorted(times), times
    listed = dpdb.run("dpdb", "break", "--list")
    assert "web_job.py:%d" % wait_line in listed.stdout and "waiting {index}" in listed.stdout
    row.locator("button.clear").click()
    expect(row).to_have_count(0)
    assert "no global breakpoints" in dpdb.run("dpdb", "break", "--list").stdout

    # The job's stacks: the two waiting workers stand in the same place, shown once.
    stacks = page.locator("#stacks")
    stacks.locator("button").click()
    expect(stacks.locator("pre")).to_contain_text(re.compile(r"^2 processes, pids \d+\D\d+", re.M))
    expect(stacks.locator("pre")).to_contain_text("web_job.py")

    # The terminal lets go (Ctrl-D); the page's console takes the session: the same prompt.
    run.sendcontrol("d")
    run.expect("detached from session %d" % sid)
    expect(thread).to_have_attribute("data-held", "no")
    # A page that holds a session and goes away lets it go, still paused.
    assert attach_from_another_socket(page, sid)["t"] == "attached"
    wait_until(lambda: not dpdb.ls()["sessions"][0]["attached"],
               "the session let go when the page that held it closed")
    expect(thread).to_have_attribute("data-held", "no")
    thread.locator("button.open-console").click()
    console = page.locator('.console[data-sid="%d"]' % sid)
    rows = console.locator(".xterm-rows")
    expect(rows).to_contain_text("(Pdb)")
    expect(thread).to_have_attribute("data-held", "here")
    console.locator(".xterm").click()
    page.keyboard.type("p ind")
    page.keyboard.press("Tab")  # completed by the session, as at `dpdb attach`'s prompt
    expect(rows).to_contain_text("(Pdb) p index")
    page.keyboard.type(" + 41")
    page.keyboard.press("Enter")
    expect(rows).to_contain_text("42")
    # What the session prints is text: an escape sequence in it is spelled out, not obeyed.
    page.keyboard.type('!raise Exception("\\x1b[2Jboom")')
    page.keyboard.press("Enter")
    expect(rows).to_contain_text(re.compile(r"Exception: \\x1b\[2Jboom"))
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, "web-console.png"))
    page.keyboard.type("c")
    page.keyboard.press("Enter")
    expect(page.locator('.process[data-pid="%d"]' % worker)).to_have_attribute(
        "data-state", "running")
    expect(console.locator(".console-status")).to_have_text(
        re.compile(r"session %d (continued|closed)" % sid))

    open(stop_file, "w").close()
    finish(run)
    page.close()
    web.terminate(force=True)


def test_scrolling_the_tree_and_the_lanes_draws_what_comes_into_view(dpdb, browser, crowd):
    from playwright.sync_api import expect

    web, url, _, _ = start_web(dpdb, env=crowd.env)
    # A short window: a few rows of the job's hundreds are in view.
    page = browser.new_page(viewport={"width": 1100, "height": 400})
    page.set_default_timeout(TIMEOUT * 1000)
    page.goto(url)
    expect(page.locator("#counts")).to_have_text(re.compile(r"^%d live:" % AGENTS))
    tree = page.locator("#tree")
    first, last = tree.locator('.process[data-pid="700000"]'), tree.locator(
        '.process[data-pid="%d"]' % (700000 + AGENTS - 1))  # the last host's last process
    expect(first).to_be_visible()
    expect(last).to_have_count(0)
    drawn = tree.locator(".process").count()
    assert 0 < drawn < AGENTS / 4, drawn

    # Scrolled to the end by the wheel: the rows there are drawn, those left behind are not.
    tree.hover()
    page.mouse.wheel(0, 30 * AGENTS * 22)
    expect(last).to_be_visible()
    expect(last.locator(".argv")).to_contain_text("--rank %d" % (AGENTS - 1))
    expect(first).to_have_count(0)
    assert tree.locator(".process").count() < AGENTS / 4
    page.mouse.wheel(0, -30 * AGENTS * 22)
    expect(first).to_be_visible()
    expect(last).to_have_count(0)

    # The timeline's lanes, one per process, are drawn the same way: a message from each.
    for i, sock in enumerate(crowd.agents.sockets):
        sock.sendall(frame({"t": "log_lines", "lines": [
            {"time": 1.7e9 + i, "text": "step %d" % i, "thread": "MainThread", "tid": 1}]}))
    lanes = page.locator("#timeline .lanes")
    expect(page.locator("#timeline .span")).to_contain_text("%d marks" % AGENTS)
    first_lane, last_lane = lanes.locator('.lane[data-pid="700000"]'), lanes.locator(
        '.lane[data-pid="%d"]' % (700000 + AGENTS - 1))  # lanes go by host, then pid
    expect(first_lane.locator(".newest")).to_have_text("step 0")
    expect(last_lane).to_have_count(0)
    assert 0 < lanes.locator(".lane").count() < AGENTS / 4
    lanes.hover()
    page.mouse.wheel(0, 30 * AGENTS * 40)
    expect(last_lane.locator(".newest")).to_have_text("step %d" % (AGENTS - 1))
    expect(last_lane).to_be_in_viewport()
    expect(first_lane).to_have_count(0)
    page.close()
    web.terminate(force=True)


def view_span(timeline):
    """The timeline's visible span in seconds, as the page shows it."""
    return float(timeline.get_attribute("data-to")) - float(timeline.get_attribute("data-from"))


def test_the_timeline_and_breakpoints_another_client_sets(dpdb, browser):
    from playwright.sync_api import expect

    # The page first, then the job on its hub: its processes' starts are on the timeline too.
    hub = dpdb.spawn("dpdb", "hub")
    hub.expect(r"dpdb hub listening on (unix:\S+)\r\n")
    web, url, _, _ = start_web(dpdb)
    page = browser.new_page(viewport={"width": 1400, "height": 700})
    page.set_default_timeout(TIMEOUT * 1000)
    page.goto(url)
    expect(page.locator("#link")).to_have_text("live")
    stop_file = os.path.join(dpdb.root, "stop")
    run = dpdb.spawn("dpdb", "run", "--hub", hub.match.group(1), JOB, stop_file, "job")
    run.expect(PROMPT)
    wait_for_the_named_workers(dpdb)
    processes = live_pids(dpdb)
    worker = dpdb.ls()["sessions"][0]["pid"]
    stop_line = line_of(JOB, "worker-1 stops here") - (1 if STOPS_ON_CALL else 0)

    timeline = page.locator("#timeline")
    lane = lambda pid: timeline.locator('.lane[data-pid="%d"]' % pid)  # noqa: E731
    for pid in processes:
        expect(lane(pid).locator(".mark.start")).to_have_count(1)
    expect(lane(worker).locator(".mark.stop")).to_have_attribute(
        "title", re.compile(r"paused at .*web_job\.py:%d in work$" % stop_line))

    # A logpoint set from a terminal is pushed to the page's list; its messages reach the lanes.
    wait_line = line_of(JOB, "os.access(stop_file")
    dpdb.run("dpdb", "break", "web_job.py:%d" % wait_line, "--log", "waiting {index}")
    row = page.locator("#breakpoints tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("td").nth(1)).to_have_text("web_job.py:%d" % wait_line)
    expect(row.locator(".standing")).to_have_text(re.compile(r"^armed in [1-4] of 4"))
    waiting = [pid for pid, p in processes.items() if p.get("process_name") == "worker-0"][0]
    expect(lane(waiting).locator(".mark.log").first).to_have_attribute(
        "title", re.compile(": waiting 0$"))

    # Zoom and pan, by the keys, a button and Ctrl with the wheel. Moved, the view stays where it is
    # (while messages come), and 0 makes it follow the newest again.
    expect(timeline).to_have_attribute("data-following", "yes")
    lanes = timeline.locator(".lanes")
    lanes.focus()
    page.keyboard.press("ArrowLeft")
    expect(timeline).to_have_attribute("data-following", "no")
    span = view_span(timeline)

    def moved(do, span_after):
        shown = timeline.get_attribute("data-from"), timeline.get_attribute("data-to")
        do()
        expect(timeline).not_to_have_attribute("data-from", shown[0])
        # The ends are seconds since the epoch, which a double holds to about 0.24 µs: the
        # span, a difference of two of them, is as exact as that, not to a part in a million.
        assert view_span(timeline) == pytest.approx(span_after, rel=1e-6, abs=1e-6)
        return float(timeline.get_attribute("data-from")) - float(shown[0])

    moved(lambda: timeline.locator('button[data-do="in"]').click(), span / 1.5)
    assert moved(lambda: page.keyboard.press("ArrowRight"), span / 1.5) > 0
    moved(lambda: page.keyboard.press("-"), span)
    lanes.hover()

    def ctrl_wheel():
        page.keyboard.down("Control")
        page.mouse.wheel(0, 120)
        page.keyboard.up("Control")

    moved(ctrl_wheel, span * 1.5)
    page.keyboard.press("0")
    expect(timeline).to_have_attribute("data-following", "yes")

    # Cleared from a terminal: gone from the page's list too.
    bp = row.get_attribute("data-bp")
    dpdb.run("dpdb", "break", "--clear", bp)
    expect(row).to_have_count(0)

    # The ends: every process's lane ends with how it ended (the worker said its status).
    run.sendline("c")
    open(stop_file, "w").close()
    for pid in processes:
        expect(lane(pid).locator(".mark.end")).to_have_attribute(
            "title", re.compile(r" (exited with 0|ended \(.+\))$"))
    expect(lane(worker).locator(".mark.end")).to_have_attribute(
        "title", re.compile(r" exited with 0$"))
    finish(run)
    if SCREENSHOTS:
        timeline.screenshot(path=os.path.join(SCREENSHOTS, "web-timeline.png"))
    page.close()
    web.terminate(force=True)


def request(port, path, headers=None, tls=False):
    # Over TLS the certificate is checked by its fingerprint (see its test), not by a CA.
    connection = (http.client.HTTPSConnection("127.0.0.1", port, timeout=10,
                                              context=ssl._create_unverified_context())
                  if tls else http.client.HTTPConnection("127.0.0.1", port, timeout=10))
    connection.request("GET", path, headers=dict({"Host": "127.0.0.1:%d" % port},
                                                 **(headers or {})))
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    return response, body


def answered(port):
    """Whether a request over TLS gets an answer (not the token's: none is sent)."""
    try:
        return request(port, "/", tls=True)[0].status == 403
    except (ConnectionError, ssl.SSLError, http.client.HTTPException):
        return False


def upgrade(port, cookie, origin, tls=False):
    """A WebSocket upgrade request spoken raw: the status line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as plain:
        raw = ssl._create_unverified_context().wrap_socket(plain) if tls else plain
        raw.sendall(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     "Sec-WebSocket-Version: 13\r\nOrigin: %s\r\nCookie: %s\r\n\r\n"
                     % (port, origin, cookie)).encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = raw.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n")[0].decode()


def test_only_the_token_holder_from_the_page_itself(dpdb):
    hub = dpdb.spawn("dpdb", "hub")
    hub.expect("dpdb hub listening")
    web, url, port, token = start_web(dpdb)

    for path in ("/", "/app.js", "/ws"):
        response, body = request(port, path)
        assert response.status == 403 and "open the URL" in body, (path, response.status)
    response, _ = request(port, "/?token=" + "0" * len(token))
    assert response.status == 403
    response, _ = request(port, "/?token=" + token, {"Host": "evil.example:%d" % port})
    assert response.status == 403  # another name for this address (DNS rebinding)

    response, _ = request(port, "/?token=" + token)
    assert response.status == 303 and response.getheader("Location") == "/"
    cookie = response.getheader("Set-Cookie").split(";")[0]
    assert "HttpOnly" in response.getheader("Set-Cookie")
    assert "SameSite=Strict" in response.getheader("Set-Cookie")
    response, _ = request(port, "/?token=" + token)
    assert response.status == 403  # one-time: a second browser gets nothing from it

    response, body = request(port, "/", {"Cookie": cookie})
    assert response.status == 200 and '<script type="module" src="/app.js"' in body
    policy = response.getheader("Content-Security-Policy")
    assert "script-src 'self'" in policy and "unsafe" not in policy
    assert response.getheader("X-Content-Type-Options") == "nosniff"
    response, body = request(port, "/xterm-LICENSE.txt", {"Cookie": cookie})
    assert response.status == 200 and "xterm.js authors" in body  # shipped with its licence

    origin = "http://127.0.0.1:%d" % port
    assert upgrade(port, cookie, "http://evil.example").startswith("HTTP/1.1 403")
    assert upgrade(port, "dpdb_web=" + "0" * 64, origin).startswith("HTTP/1.1 403")
    assert upgrade(port, cookie, origin).startswith("HTTP/1.1 101")

    # The token is in the one line that prints the URL, never in what dpdb web logs.
    web.kill(signal.SIGINT)
    web.expect(pexpect.EOF)
    said = web.logfile_read.getvalue()
    assert said.count(token) == 1, said
    assert "refused GET / without the token" in said
    assert "from another origin (http://evil.example)" in said


def test_over_tls_the_page_its_certificate_and_no_plain_http(dpdb, browser):
    """--tls on loopback, as off loopback: https with the certificate's fingerprint printed."""
    from playwright.sync_api import expect

    run, stop_file = start_job(dpdb)
    wait_for_the_named_workers(dpdb)
    worker = dpdb.ls()["sessions"][0]["pid"]
    web, url, port, token = start_web(dpdb, "--tls")
    assert url.startswith("https://127.0.0.1:%d/?token=" % port), url
    web.expect(r"dpdb web: its certificate is (sha256:[0-9a-f]{64})\r\n")
    served = ssl.get_server_certificate(("127.0.0.1", port))
    assert web.match.group(1) == "sha256:" + hashlib.sha256(
        ssl.PEM_cert_to_DER_cert(served)).hexdigest()

    # Plain HTTP gets no answer at all, not even to the token.
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        request(port, "/?token=" + token)
    response, body = request(port, "/", tls=True)
    assert response.status == 403 and "open the URL" in body

    # Strangers who hold connections open (here from another address) cannot keep the owner
    # out: once past their grace, the oldest of theirs gives way (as on the hub's port).
    flood = [socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
             for _ in range(64)]
    try:
        wait_until(lambda: answered(port), "an answer while strangers hold the connections")
    finally:
        for stranger in flood:
            stranger.close()

    context = browser.new_context(ignore_https_errors=True)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT * 1000)
        page.goto(url)
        assert page.url == "https://127.0.0.1:%d/" % port
        # The job's state comes over the page's WebSocket, over TLS too.
        paused = page.locator('.process[data-pid="%d"]' % worker)
        expect(paused).to_have_attribute("data-state", "paused")
        assert [(c["name"], c["secure"]) for c in context.cookies()] == [("dpdb_web", True)]
        cookie = "dpdb_web=" + context.cookies()[0]["value"]
        # The page's origin is the https one: the same address over http is another.
        assert upgrade(port, cookie, "http://127.0.0.1:%d" % port, tls=True).startswith(
            "HTTP/1.1 403")
        assert upgrade(port, cookie, "https://127.0.0.1:%d" % port, tls=True).startswith(
            "HTTP/1.1 101")
        run.sendline("c")
        expect(paused).to_have_attribute("data-state", "running")
    finally:
        context.close()
    open(stop_file, "w").close()
    finish(run)
    web.kill(signal.SIGINT)
    web.expect(pexpect.EOF)
    said = web.logfile_read.getvalue()
    assert "refused a connection from 127.0.0.1: its TLS handshake failed" in said, said
    assert "closing the oldest unauthenticated connections from 127.0.0.2" in said, said
    assert said.count(token) == 1, said


# Run on the other host: what a GET / without the token gets over https and over plain http.
ASK_FROM_ELSEWHERE = """
import http.client, json, ssl, sys
host, port = sys.argv[1], int(sys.argv[2])
said = {}
for scheme, connection in (
        ("https", http.client.HTTPSConnection(host, port, timeout=10,
                                              context=ssl._create_unverified_context())),
        ("http", http.client.HTTPConnection(host, port, timeout=10))):
    try:
        connection.request("GET", "/")
        said[scheme] = connection.getresponse().status
    except (ConnectionError, http.client.HTTPException) as error:
        said[scheme] = "no answer (%s)" % type(error).__name__
print(json.dumps(said))
"""


def test_off_loopback_only_tls(dpdb, two_hosts):  # noqa: F811 (the fixture)
    login, node = two_hosts
    hub = dpdb.spawn("dpdb", "hub")
    hub.expect("dpdb hub listening")
    # On the login host's network address, reached from the node: no --tls needed.
    web = dpdb.spawn("ip", "netns", "exec", login, DPDB, "web", "--listen", "10.231.7.1:0")
    web.expect(r"dpdb web: open https://10\.231\.7\.1:(\d+)/\?token=[0-9a-f]+\r\n")
    port = int(web.match.group(1))
    web.expect(r"dpdb web: its certificate is sha256:[0-9a-f]{64}\r\n")
    asked = subprocess.run(["ip", "netns", "exec", node, sys.executable, "-c", ASK_FROM_ELSEWHERE,
                            "10.231.7.1", str(port)], capture_output=True, text=True,
                           timeout=TIMEOUT)
    said = json.loads(asked.stdout)
    assert said["https"] == 403, asked  # TLS, and still the token's rules
    assert said["http"].startswith("no answer"), asked
    web.kill(signal.SIGINT)
    web.expect(pexpect.EOF)


def test_bad_listen_addresses_and_the_hubs_end_each_get_one_line(dpdb):
    for bad, said in (("0.0.0.0:0", "is every address"), ("nowhere", "wants HOST:PORT")):
        done = dpdb.run("dpdb", "web", "--listen", bad)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    done = dpdb.run("dpdb", "web")
    assert done.returncode == 2 and "dpdb hub" in done.stderr, done.stderr  # no hub to talk to

    hub = dpdb.spawn("dpdb", "hub")
    hub.expect("dpdb hub listening")
    web, _, _, _ = start_web(dpdb)
    hub.kill(signal.SIGKILL)
    web.expect(r"dpdb web: the hub went away: [^\r\n]+\r\n")
    finish(web, 1)
