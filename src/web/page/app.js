// dpdb web's page: the job pushed over one WebSocket, drawn as host → process → thread, with a
// console per paused session, the global breakpoints, the timeline and the job's stacks.
// Everything a peer sent (argv, tags, names, file names) goes into the page as text only.
import { Breakpoints } from "/breakpoints.js";
import { Consoles } from "/consoles.js";
import { Stacks } from "/stacks.js";
import { Timeline } from "/timeline.js";

const job = { processes: new Map(), sessions: new Map(), exited: new Map() };
let drawPending = false;
let socket = null;
let consoles = null;
let timeline = null;
let breakpoints = null;
const asked = new Map();  // request id -> its promise's resolve
let lastAsked = 0;

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

// A request answered by one result (ok, message, data); a closed link answers it failed.
function ask(type, fields) {
  lastAsked += 1;
  const id = lastAsked;
  return new Promise((resolve) => {
    asked.set(id, resolve);
    send(Object.assign({ t: type, id }, fields));
  });
}

function answered(id, result) {
  const resolve = asked.get(id);
  if (!resolve) return;
  asked.delete(id);
  resolve(result);
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function byId(list, key) {
  const map = new Map();
  for (const item of list || []) map.set(item[key], item);
  return map;
}

function apply(message) {
  if (message.t === "snapshot") {
    job.processes = byId(message.processes, "pid");
    job.sessions = byId(message.sessions, "sid");
    job.exited = byId(message.exited, "pid");
    return;
  }
  if (message.t !== "event") return;
  const data = message.data;
  switch (message.kind) {
    case "process_start":
    case "process_update":
      job.processes.set(data.pid, data);
      job.exited.delete(data.pid);
      break;
    case "process_crash": {
      const process = job.processes.get(data.pid);
      if (process) process.crash = data.signal;
      break;
    }
    case "process_exit": {
      const record = Object.assign({}, job.processes.get(data.pid) || {}, data);
      job.processes.delete(data.pid);
      job.exited.set(data.pid, record);
      break;
    }
    case "session_open":
    case "session_update":
      job.sessions.set(data.sid, data);
      break;
    case "session_close":
      job.sessions.delete(data.sid);
      break;
  }
}

function commandLine(process) {
  return Array.isArray(process.argv) ? process.argv.join(" ") : "";
}

function tagText(process) {
  const tags = process.tags && typeof process.tags === "object" ? process.tags : {};
  return Object.keys(tags).map((key) => key + "=" + tags[key]);
}

// [class, words] of a process's state.
function stateOf(process, sessions, ended) {
  if (ended) {
    if (process.signal) return ["crashed", "crashed by " + process.signal];
    if (process.exec) return ["exited", "exec'd " + process.exec];
    if (process.status !== undefined) return ["exited", "exited with " + process.status];
    return ["exited", "ended (" + (process.reason || "unknown") + ")"];
  }
  if (process.crash) return ["crashed", "crashing by " + process.crash];
  if (typeof process.unreachable_since === "number") {
    // Its host or link went quiet: the hub keeps it listed as it was last heard of.
    const since = new Date(process.unreachable_since * 1000).toLocaleTimeString();
    return ["unreachable", "unreachable since " + since];
  }
  if (sessions.length) return ["paused", "paused"];
  return ["running", "running"];
}

function where(session) {
  const place = session.file ? session.file + ":" + session.line : "an unknown line";
  return "paused at " + place + (session.function ? " in " + session.function : "");
}

function processNode(process, sessions, ended) {
  const [stateClass, stateWords] = stateOf(process, sessions, ended);
  const node = el("div", "process");
  node.dataset.pid = String(process.pid);
  node.dataset.state = stateClass;
  const line = el("div", "line");
  line.append(el("span", "state " + stateClass, stateWords), " ");
  line.append(el("span", "pid", "pid " + process.pid), " ");
  if (process.process_name) line.append(el("span", "name", process.process_name), " ");
  line.append(el("span", "argv", commandLine(process)));
  for (const tag of tagText(process)) line.append(el("span", "tag", tag));
  node.append(line);
  for (const session of sessions) {
    const thread = el("div", "thread");
    thread.dataset.sid = String(session.sid);
    // A session is held by one client at a time: one held elsewhere (a terminal's `dpdb
    // attach`) is not taken from here.
    const mine = consoles.has(session.sid);
    const held = session.attached && !mine;
    thread.dataset.held = held ? "elsewhere" : mine ? "here" : "no";
    const open = el("button", "open-console", held ? "held by another client" : "console");
    open.disabled = held || mine;
    // The button first: a long place is cut at the row's end, the button never.
    thread.append(open, " ", el("span", "thread-name", "thread " + (session.thread || session.tid)));
    thread.append(el("span", "where", where(session)));
    node.append(thread);
  }
  return node;
}

function matches(words, process, stateWords) {
  if (!words) return true;
  const haystack = [process.host, String(process.pid), commandLine(process), stateWords,
                    process.process_name || ""].concat(tagText(process)).join(" ").toLowerCase();
  return words.split(/\s+/).every((word) => haystack.includes(word));
}

// The tree is drawn virtualized: every host title, process line and thread line is one row of
// ROW pixels, the rows are laid out over the whole job (filter and counts too), and only those
// in the scroll container's view (and OVERSCAN rows either side) become elements. A pushed
// change rebuilds the rows, not the elements of 10,000 processes.
const ROW = 22;
const OVERSCAN = 10;
let rows = { items: [], offsets: [0] };

function layOut() {
  const filter = document.getElementById("filter").value.trim().toLowerCase();
  const sessionsOf = new Map();
  for (const session of job.sessions.values()) {
    if (!sessionsOf.has(session.pid)) sessionsOf.set(session.pid, []);
    sessionsOf.get(session.pid).push(session);
  }
  const hosts = new Map();
  const counts = { running: 0, paused: 0, unreachable: 0, exited: 0, crashed: 0 };
  const add = (process, ended) => {
    const sessions = ended ? [] : sessionsOf.get(process.pid) || [];
    const [stateClass, stateWords] = stateOf(process, sessions, ended);
    counts[stateClass] += 1;
    if (!matches(filter, process, stateWords)) return;
    const host = process.host || "?";
    if (!hosts.has(host)) hosts.set(host, []);
    hosts.get(host).push({ host, process, sessions, ended, rows: 1 + sessions.length });
  };
  for (const process of job.processes.values()) add(process, false);
  for (const process of job.exited.values()) add(process, true);
  const items = [];
  const offsets = [0];
  const push = (item) => {
    items.push(item);
    offsets.push(offsets[offsets.length - 1] + item.rows * ROW);
  };
  for (const host of [...hosts.keys()].sort()) {
    push({ host, title: host + " (" + hosts.get(host).length + ")", rows: 1 });
    for (const item of hosts.get(host)) push(item);
  }
  rows = { items, offsets };
  document.getElementById("counts").textContent =
    `${job.processes.size} live: ${counts.running} running, ${counts.paused} paused, ` +
    `${counts.unreachable} unreachable; ` +
    `${counts.exited} exited, ${counts.crashed} crashed`;
}

// The first item whose bottom is below `y`.
function itemAt(y) {
  let low = 0;
  let high = rows.items.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (rows.offsets[middle + 1] <= y) low = middle + 1;
    else high = middle;
  }
  return low;
}

function spacer(height) {
  const node = el("div", "spacer");
  node.style.height = height + "px";
  return node;
}

function render() {
  const tree = document.getElementById("tree");
  const { items, offsets } = rows;
  const first = itemAt(tree.scrollTop - OVERSCAN * ROW);
  const bottom = tree.scrollTop + tree.clientHeight + OVERSCAN * ROW;
  const nodes = [spacer(offsets[first])];
  let section = null;
  let last = first;
  for (; last < items.length && offsets[last] < bottom; last += 1) {
    const item = items[last];
    if (!section || section.dataset.host !== item.host) {
      section = el("section", "host");
      section.dataset.host = item.host;
      nodes.push(section);
    }
    section.append(item.title !== undefined ? el("div", "title", item.title)
                                            : processNode(item.process, item.sessions, item.ended));
  }
  nodes.push(spacer(offsets[items.length] - offsets[last]));
  tree.replaceChildren(...nodes);
}

function draw() {
  drawPending = false;
  layOut();
  render();
}

function redraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(draw);
}

function received(message) {
  switch (message.t) {
    case "snapshot":
      for (const moment of message.moments || []) timeline.event(moment.kind, moment.data);
      apply(message);
      redraw();
      break;
    case "event":
      // A logpoint's message is the timeline's alone: the tree is not laid out again for it.
      if (message.kind === "log") {
        timeline.add([message.data]);
        break;
      }
      // Another client (`dpdb break`, an IDE) changed the job's breakpoints: the list again.
      if (message.kind === "breakpoints") {
        breakpoints.refresh();
        break;
      }
      timeline.event(message.kind, message.data);
      apply(message);
      redraw();
      break;
    case "attached":
    case "output":
    case "prompt":
    case "completions":
    case "detached":
      consoles.handle(message);
      redraw();
      break;
    case "result":
      answered(message.id, message);
      break;
    case "error":
      if (typeof message.sid === "number") consoles.refused(message.sid, message.message);
      if (message.id !== undefined) answered(message.id, { ok: false, message: message.message });
      document.getElementById("said").textContent = message.message;
      break;
  }
}

function openConsole(event) {
  const button = event.target.closest("button.open-console");
  if (!button) return;
  const session = job.sessions.get(Number(button.closest(".thread").dataset.sid));
  if (!session) return;
  const process = job.processes.get(session.pid) || {};
  consoles.openFor(session, "session " + session.sid + ": pid " + session.pid + " " +
                   (process.process_name || "") + " thread " + (session.thread || session.tid));
  redraw();
}

function connect() {
  const link = document.getElementById("link");
  socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") +
                         location.host + "/ws");
  socket.onopen = () => {
    link.textContent = "live";
    link.classList.remove("down");
  };
  socket.onmessage = (event) => received(JSON.parse(event.data));
  socket.onclose = () => {
    link.textContent = "disconnected from dpdb web (reload to reconnect)";
    link.classList.add("down");
    for (const id of [...asked.keys()]) answered(id, { ok: false, message: "disconnected" });
  };
}

// A module runs once the document is parsed.
consoles = new Consoles(document.getElementById("consoles"), send);
breakpoints = new Breakpoints(document.getElementById("breakpoints"), ask);
new Stacks(document.getElementById("stacks"), ask);
timeline = new Timeline(document.getElementById("timeline"), ask);
document.getElementById("filter").addEventListener("input", redraw);
document.getElementById("tree").addEventListener("click", openConsole);
document.getElementById("tree").addEventListener("scroll", () => requestAnimationFrame(render));
window.addEventListener("resize", () => requestAnimationFrame(render));
connect();
socket.addEventListener("open", () => {
  breakpoints.refresh();
  timeline.load();
});
