// A console per paused session: the pdb prompt `dpdb attach` gives, in a terminal (xterm.js).
// Lines are edited here and sent whole, as `dpdb attach` sends them; Tab asks the session for
// completions. What the session prints is shown as text: its control characters are written
// out (\x1b), never obeyed.
import { Terminal } from "/xterm.mjs";

// readline's default word breaks, which pdb's completion is written for.
const WORD_BREAKS = " \t\n`~!@#$%^&*()-=+[{]}\\|;:'\",<>/?";

function shown(text) {
  return String(text).replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g,
    (c) => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0"));
}

function commonPrefix(words) {
  let prefix = words[0] || "";
  for (const word of words) {
    while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  }
  return prefix;
}

class SessionConsole {
  constructor(sid, title, send, onGone) {
    this.sid = sid;
    this.send = send;
    this.onGone = onGone;
    this.line = "";
    this.prompt = null;  // the prompt awaiting a line, once the session sent one
    this.nested = false;
    this.history = [];
    this.back = 0;  // how far back in history the line came from
    this.completionId = 0;
    this.completing = null;  // the line a completion was asked for
    this.node = document.createElement("section");
    this.node.className = "console";
    this.node.dataset.sid = String(sid);
    const bar = document.createElement("div");
    bar.className = "console-title";
    this.status = document.createElement("span");
    this.status.className = "console-status";
    this.status.textContent = "attaching…";
    const titleText = document.createElement("span");
    titleText.textContent = title + " ";
    this.button = document.createElement("button");
    this.button.className = "console-close";
    this.button.textContent = "detach";
    this.button.addEventListener("click", () => this.close());
    bar.append(titleText, this.status, this.button);
    const screen = document.createElement("div");
    screen.className = "console-screen";
    this.node.append(bar, screen);
    this.terminal = new Terminal({ convertEol: true, rows: 16, cols: 90, scrollback: 2000 });
    this.terminal.open(screen);
    this.terminal.onData((data) => this.typed(data));
    send({ t: "attach", sid, cols: this.terminal.cols });
  }

  write(text) {
    this.terminal.write(shown(text));
  }

  handle(message) {
    switch (message.t) {
      case "attached":
        this.status.textContent = "attached";
        this.terminal.focus();
        break;
      case "output":
        this.write(message.text);
        break;
      case "prompt":
        this.prompt = message.text;
        this.nested = Boolean(message.nested);
        this.write(message.text + this.line);
        break;
      case "completions":
        if (message.id === this.completionId) this.completed(message.matches);
        break;
      case "detached":
        this.ended("session " + this.sid + " " + message.reason);
        break;
    }
  }

  ended(why) {
    this.prompt = null;
    this.terminal.write("\r\n");
    this.write("[" + why + "]");
    this.status.textContent = why;
    this.button.textContent = "close";
    this.button.onclick = () => this.remove();
    this.gone = true;
  }

  remove() {
    this.terminal.dispose();
    this.node.remove();
    this.onGone(this.sid);
  }

  close() {
    if (this.gone) return;
    this.send({ t: "detach", sid: this.sid });
  }

  replaceLine(line) {
    this.terminal.write("\b \b".repeat(this.line.length));
    this.line = line;
    this.write(line);
  }

  typed(data) {
    if (this.gone) return;
    if (data.startsWith("\x1b")) {
      if (data === "\x1b[A" && this.back < this.history.length) {
        this.back += 1;
        this.replaceLine(this.history[this.history.length - this.back]);
      } else if (data === "\x1b[B" && this.back > 0) {
        this.back -= 1;
        this.replaceLine(this.back ? this.history[this.history.length - this.back] : "");
      }
      return;
    }
    for (const char of data) {
      if (char === "\r" || char === "\n") {
        this.enter();
      } else if (char === "\x7f" || char === "\b") {
        if (this.line) {
          this.line = this.line.slice(0, -1);
          this.terminal.write("\b \b");
        }
      } else if (char === "\t") {
        this.complete();
      } else if (char === "\x03") {
        // Ctrl-C at a prompt drops the line, as in a terminal.
        this.terminal.write("^C\r\n");
        this.line = "";
        if (this.prompt !== null) this.write(this.prompt);
      } else if (char === "\x04" && !this.line) {
        // Ctrl-D: the end of a nested prompt's input; at pdb's own it detaches (dpdb attach's).
        if (this.nested && this.prompt !== null) {
          this.terminal.write("\r\n");
          this.prompt = null;
          this.send({ t: "input", sid: this.sid, line: "", eof: true });
        } else {
          this.close();
        }
      } else if (char >= " ") {
        this.line += char;
        this.write(char);
      }
    }
  }

  enter() {
    if (this.prompt === null) return;  // the last line's answer is not in yet
    this.terminal.write("\r\n");
    const line = this.line;
    if (line.trim() && this.history[this.history.length - 1] !== line) this.history.push(line);
    this.back = 0;
    this.line = "";
    this.prompt = null;
    this.send({ t: "input", sid: this.sid, line });
  }

  complete() {
    if (this.prompt === null) return;
    let begin = this.line.length;
    while (begin > 0 && !WORD_BREAKS.includes(this.line[begin - 1])) begin -= 1;
    this.completionId += 1;
    this.completing = this.line;
    this.send({ t: "complete", sid: this.sid, id: this.completionId,
                text: this.line.slice(begin), line: this.line, begidx: begin,
                endidx: this.line.length });
  }

  completed(matches) {
    const words = (Array.isArray(matches) ? matches : []).filter((m) => typeof m === "string");
    // Typed on meanwhile: the answer is for another line.
    if (!words.length || this.prompt === null || this.line !== this.completing) return;
    let begin = this.line.length;
    while (begin > 0 && !WORD_BREAKS.includes(this.line[begin - 1])) begin -= 1;
    const prefix = commonPrefix(words);
    if (prefix.length > this.line.length - begin) {
      this.replaceLine(this.line.slice(0, begin) + prefix);
    } else if (words.length > 1) {
      this.terminal.write("\r\n");
      this.write(words.join("  ") + "\n" + this.prompt + this.line);
    }
  }
}

export class Consoles {
  constructor(container, send) {
    this.container = container;
    this.send = send;
    this.open = new Map();  // by sid
  }

  has(sid) {
    return this.open.has(sid);
  }

  // Opens a console on a paused session; a session held elsewhere is refused by dpdb web.
  openFor(session, title) {
    if (this.open.has(session.sid)) return;
    const console_ = new SessionConsole(session.sid, title, this.send,
                                        (sid) => this.open.delete(sid));
    this.open.set(session.sid, console_);
    this.container.prepend(console_.node);
  }

  // A console's message from the hub (attached, output, prompt, completions, detached).
  handle(message) {
    const console_ = this.open.get(message.sid);
    if (console_) console_.handle(message);
  }

  // dpdb web refused what a console asked (a session held elsewhere): that console ends.
  refused(sid, why) {
    const console_ = this.open.get(sid);
    if (console_ && !console_.gone) console_.ended(why);
  }
}
