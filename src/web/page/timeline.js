// The job on one time axis, a lane per process: its logpoint messages, its stops, its start and
// its end. Zoom and pan by Ctrl/Shift and the wheel, drag, buttons or keys; the view follows the
// newest until the user moves it ("all" follows again).
// Each mark is placed once, at its time; the view is two CSS properties on the lanes' container
// (--from, --span) that every mark's position is computed from, so a new message adds one mark to
// one lane (none, if that lane is out of view), and zooming redraws no element.
// What a peer sent (a message's text, a thread's name) is put in the page as text only.

// The newest marks kept on the page (a tenth more between prunes); older ones leave it first.
const KEPT = 10000;
// The least span a zoom reaches (seconds), and how much one step zooms.
const LEAST_SPAN = 0.001;
const ZOOM_STEP = 1.5;
const PAN_STEP = 0.25;  // of the span

function clock(time) {
  const date = new Date(time * 1000);
  return date.toLocaleTimeString([], { hour12: false }) + "." +
    String(date.getMilliseconds()).padStart(3, "0");
}

// [kind, words, lane fields] of a job event the timeline shows, or null.
function moment(kind, data) {
  switch (kind) {
    case "process_start":
      return ["start", "started " + (Array.isArray(data.argv) ? data.argv.join(" ") : "")];
    case "session_open": {
      const place = data.file ? data.file + ":" + data.line : "an unknown line";
      return ["stop", "thread " + (data.thread || data.tid) + " paused at " + place +
              (data.function ? " in " + data.function : "")];
    }
    case "process_crash":
      return ["end", "crashing by " + data.signal];
    case "process_exit":
      if (data.signal) return ["end", "crashed by " + data.signal];
      if (data.status !== undefined) return ["end", "exited with " + data.status];
      return ["end", "ended (" + (data.reason || "unknown") + ")"];
  }
  return null;
}

// Lanes are drawn virtualized, as the tree is: each is LANE pixels high (app.css), and only those
// in the lanes' scroll view (and OVERSCAN either side) are elements; a lane out of view is data.
const LANE = 40;
const OVERSCAN = 5;

function markNode(item, origin) {
  const node = document.createElement("span");
  node.className = "mark " + item.kind;
  node.dataset.time = String(item.time);
  node.title = clock(item.time) + " " + item.words;
  node.style.setProperty("--t", String(item.time - origin));
  item.node = node;
  return node;
}

export class Timeline {
  constructor(root, ask) {
    this.ask = ask;
    this.root = root;
    this.lanes = root.querySelector(".lanes");
    this.span = root.querySelector(".span");
    this.byName = new Map();  // lane name -> {name, pid, label, items, newest, node?}
    this.names = [];          // the lanes' names, sorted: their order on the page
    this.shown = [];          // the lanes that are elements now
    this.marks = [];          // every mark kept: {time, kind, words, key, lane, node?}
    this.seen = new Set();    // what was received twice (kept, and live) is shown once
    this.first = Infinity;
    this.last = -Infinity;
    this.origin = null;       // marks' times are kept relative to it (CSS numbers stay small)
    this.view = null;         // [from, to] once the user moved it; null: follow the whole
    this.viewPending = false;
    this.renderPending = false;
    root.querySelector(".controls").addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (button) this.command(button.dataset.do);
    });
    this.lanes.addEventListener("wheel", (event) => this.wheel(event), { passive: false });
    this.lanes.addEventListener("pointerdown", (event) => this.drag(event));
    this.lanes.addEventListener("scroll", () => this.laneMoved());
    // Keys anywhere in the panel (its buttons too, once clicked).
    root.addEventListener("keydown", (event) => this.key(event));
  }

  async load() {
    const result = await this.ask("logs", {});
    if (result.ok) this.add(result.data.messages || []);
  }

  // Logpoint messages: each a mark in its process's lane, its text the lane's newest.
  add(messages) {
    for (const message of messages) {
      if (typeof message.time !== "number") continue;
      const key = [message.host, message.pid, message.tid, message.time, message.text].join("\n");
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      const lane = this.lane(message.host, message.pid, message.process_name);
      this.mark(lane, "log", message.time, (message.thread || "?") + ": " + message.text, key);
      if (lane.newestTime === null || message.time >= lane.newestTime) {
        lane.newestTime = message.time;
        lane.newest = message.text;
        if (lane.node) lane.node.querySelector(".newest").textContent = message.text;
      }
    }
    this.changed();
  }

  // A job event (pushed with `at`, when dpdb web heard of it): a start, a stop or an end.
  event(kind, data) {
    const shown = data && typeof data.at === "number" ? moment(kind, data) : null;
    if (!shown) return;
    const lane = this.lane(data.host, data.pid, data.process_name);
    this.mark(lane, shown[0], data.at, shown[1]);
    this.changed();
  }

  lane(host, pid, processName) {
    const name = (host || "?") + " pid " + pid;
    let lane = this.byName.get(name);
    if (lane) {
      if (processName && !lane.label.endsWith(" " + processName)) {
        lane.label = name + " " + processName;
        if (lane.node) lane.node.querySelector(".lane-name").textContent = lane.label;
      }
      return lane;
    }
    lane = { name, pid, label: name + (processName ? " " + processName : ""), items: [],
             newest: "", newestTime: null, node: null };
    this.byName.set(name, lane);
    // In the order of their names: the one new lane goes where it belongs (found by halves: a
    // logpoint in 10,000 processes makes 10,000 lanes).
    let low = 0;
    let high = this.names.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.names[middle] < name) low = middle + 1;
      else high = middle;
    }
    this.names.splice(low, 0, name);
    this.laneMoved();
    return lane;
  }

  // A mark in its lane's items, in the order of their times (the kept messages come after some
  // live ones); an element at once only if the lane is one now.
  mark(lane, kind, time, words, key) {
    if (this.origin === null) this.origin = Math.floor(time);
    const item = { time, kind, words, key, lane, node: null };
    let at = lane.items.length;
    while (at > 0 && lane.items[at - 1].time > time) at -= 1;
    lane.items.splice(at, 0, item);
    if (lane.node) {
      const next = lane.items[at + 1];
      lane.node.querySelector(".track").insertBefore(markNode(item, this.origin),
                                                     next ? next.node : null);
    }
    this.marks.push(item);
    this.first = Math.min(this.first, time);
    this.last = Math.max(this.last, time);
  }

  changed() {
    // Pruned by the tenth, not by the message: each prune sorts every mark.
    if (this.marks.length > KEPT * 1.1) this.prune();
    if (this.viewPending) return;
    this.viewPending = true;
    requestAnimationFrame(() => this.showView());
  }

  prune() {
    this.marks.sort((a, b) => a.time - b.time);
    const lanes = new Set();
    for (const gone of this.marks.splice(0, this.marks.length - KEPT)) {
      gone.gone = true;
      if (gone.node) gone.node.remove();
      if (gone.key) this.seen.delete(gone.key);
      lanes.add(gone.lane);
    }
    for (const lane of lanes) lane.items = lane.items.filter((item) => !item.gone);
    this.first = this.marks[0].time;
  }

  // The lanes' places changed (a new one, a scroll): the lanes in view made again, once a frame.
  laneMoved() {
    if (this.renderPending) return;
    this.renderPending = true;
    requestAnimationFrame(() => this.render());
  }

  laneNode(lane) {
    const node = document.createElement("div");
    node.className = "lane";
    node.dataset.pid = String(lane.pid);
    const label = document.createElement("div");
    label.className = "lane-name";
    label.textContent = lane.label;
    const track = document.createElement("div");
    track.className = "track";
    track.append(...lane.items.map((item) => markNode(item, this.origin)));
    const newest = document.createElement("div");
    newest.className = "newest";
    newest.textContent = lane.newest;
    node.append(label, track, newest);
    return node;
  }

  render() {
    this.renderPending = false;
    const top = this.lanes.scrollTop;
    const first = Math.max(Math.floor(top / LANE) - OVERSCAN, 0);
    const last = Math.min(Math.ceil((top + this.lanes.clientHeight) / LANE) + OVERSCAN,
                          this.names.length);
    const shown = this.names.slice(first, last).map((name) => this.byName.get(name));
    const keep = new Set(shown);
    for (const lane of this.shown) {
      if (keep.has(lane)) continue;
      lane.node = null;
      for (const item of lane.items) item.node = null;
    }
    for (const lane of shown) {
      if (!lane.node) lane.node = this.laneNode(lane);
    }
    this.shown = shown;
    const spacer = (lanes) => {
      const node = document.createElement("div");
      node.className = "spacer";
      node.style.height = lanes * LANE + "px";
      return node;
    };
    this.lanes.replaceChildren(spacer(first), ...shown.map((lane) => lane.node),
                               spacer(this.names.length - last));
  }

  // [from, to]: the user's, or the whole job's with a margin so the ends' marks show whole.
  visible() {
    if (this.view) return this.view;
    const span = Math.max(this.last - this.first, LEAST_SPAN);
    return [this.first - span * 0.02, this.last + span * 0.02];
  }

  showView() {
    this.viewPending = false;
    if (this.origin === null) return;
    const [from, to] = this.visible();
    this.lanes.style.setProperty("--from", String(from - this.origin));
    this.lanes.style.setProperty("--span", String(to - from));
    this.root.dataset.from = String(from);
    this.root.dataset.to = String(to);
    this.root.dataset.following = this.view ? "no" : "yes";
    this.span.textContent = clock(from) + " – " + clock(to) + " (" +
      (to - from).toFixed(3) + " s), " + this.marks.length + " marks" +
      (this.view ? "" : ", following");
  }

  // Zooms by `factor` (below 1: in) around `at`, a fraction of the width from the left.
  zoom(factor, at = 0.5) {
    if (this.origin === null) return;
    const [from, to] = this.visible();
    const span = Math.max((to - from) * factor, LEAST_SPAN);
    const centre = from + (to - from) * at;
    this.view = [centre - span * at, centre - span * at + span];
    this.changed();
  }

  pan(fraction) {
    if (this.origin === null) return;
    const [from, to] = this.visible();
    const by = (to - from) * fraction;
    this.view = [from + by, to + by];
    this.changed();
  }

  command(what) {
    if (what === "in") this.zoom(1 / ZOOM_STEP);
    else if (what === "out") this.zoom(ZOOM_STEP);
    else if (what === "earlier") this.pan(-PAN_STEP);
    else if (what === "later") this.pan(PAN_STEP);
    else if (what === "all") {
      this.view = null;
      this.changed();
    }
  }

  // Where a pointer is across the tracks, as a fraction of their width.
  across(clientX) {
    const track = this.lanes.querySelector(".track");
    if (!track) return 0.5;
    const box = track.getBoundingClientRect();
    return Math.min(Math.max((clientX - box.left) / Math.max(box.width, 1), 0), 1);
  }

  // Ctrl (or Cmd) and the wheel zoom, Shift and the wheel (or a sideways wheel) pan; the
  // wheel alone scrolls the lanes, as everywhere.
  wheel(event) {
    if (event.ctrlKey || event.metaKey) {
      if (event.deltaY) this.zoom(event.deltaY < 0 ? 1 / ZOOM_STEP : ZOOM_STEP,
                                  this.across(event.clientX));
    } else if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
      const by = event.shiftKey ? event.deltaY || event.deltaX : event.deltaX;
      this.pan(Math.sign(by) * PAN_STEP / 2);
    } else {
      return;
    }
    event.preventDefault();
  }

  drag(event) {
    const track = this.lanes.querySelector(".track");
    if (event.button !== 0 || !track || this.origin === null) return;
    const width = Math.max(track.getBoundingClientRect().width, 1);
    const [from, to] = this.visible();
    const startX = event.clientX;
    const move = (moved) => {
      const by = -(moved.clientX - startX) / width * (to - from);
      this.view = [from + by, to + by];
      this.changed();
    };
    const stop = () => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", stop);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", stop);
  }

  key(event) {
    const commands = { "+": "in", "=": "in", "-": "out", ArrowLeft: "earlier",
                       ArrowRight: "later", "0": "all" };
    const what = commands[event.key];
    if (!what) return;
    event.preventDefault();
    this.command(what);
  }
}
