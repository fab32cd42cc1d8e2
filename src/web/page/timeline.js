// The logpoints' messages on one time axis, a lane per process, each lane's in the order of
// their times: those the hub kept (asked once connected), then each as it comes.
// A message's text is a peer's: it is put in the page as text (a title, a text node) only.

// The newest kept on the page; older ones leave it first.
const KEPT = 10000;

function clock(time) {
  const date = new Date(time * 1000);
  return date.toLocaleTimeString([], { hour12: false }) + "." +
    String(date.getMilliseconds()).padStart(3, "0");
}

export class Timeline {
  constructor(root, ask) {
    this.ask = ask;
    this.lanes = root.querySelector(".lanes");
    this.span = root.querySelector(".span");
    this.messages = [];
    this.seen = new Set();  // what was received twice (kept, and live) is shown once
    this.drawPending = false;
  }

  async load() {
    const result = await this.ask("logs", {});
    if (result.ok) this.add(result.data.messages || []);
  }

  add(messages) {
    for (const message of messages) {
      if (typeof message.time !== "number") continue;
      const key = [message.host, message.pid, message.tid, message.time, message.text].join("\n");
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      this.messages.push(message);
    }
    if (this.messages.length > KEPT) {
      this.messages.sort((a, b) => a.time - b.time);
      this.messages.splice(0, this.messages.length - KEPT);
    }
    if (!this.drawPending) {
      this.drawPending = true;
      requestAnimationFrame(() => this.draw());
    }
  }

  draw() {
    this.drawPending = false;
    if (!this.messages.length) return;
    const byLane = new Map();
    let first = Infinity;
    let last = -Infinity;
    for (const message of this.messages) {
      const lane = (message.host || "?") + " pid " + message.pid;
      if (!byLane.has(lane)) byLane.set(lane, []);
      byLane.get(lane).push(message);
      first = Math.min(first, message.time);
      last = Math.max(last, message.time);
    }
    const width = Math.max(last - first, 0.001);
    this.span.textContent = clock(first) + " – " + clock(last) + ", " +
      this.messages.length + " messages";
    const lanes = [];
    for (const [name, messages] of [...byLane.entries()].sort()) {
      messages.sort((a, b) => a.time - b.time);
      const lane = document.createElement("div");
      lane.className = "lane";
      lane.dataset.pid = String(messages[0].pid);
      const label = document.createElement("div");
      label.className = "lane-name";
      label.textContent = name + (messages[0].process_name ? " " + messages[0].process_name : "");
      const track = document.createElement("div");
      track.className = "track";
      for (const message of messages) {
        const mark = document.createElement("span");
        mark.className = "mark";
        mark.dataset.time = String(message.time);
        mark.title = clock(message.time) + " " + (message.thread || "?") + ": " + message.text;
        mark.style.left = (100 * (message.time - first) / width) + "%";
        track.append(mark);
      }
      const newest = document.createElement("div");
      newest.className = "newest";
      newest.textContent = messages[messages.length - 1].text;
      lane.append(label, track, newest);
      lanes.push(lane);
    }
    this.lanes.replaceChildren(...lanes);
  }
}
