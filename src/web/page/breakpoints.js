// The job's global breakpoints and logpoints (`dpdb break`): listed with where each is armed,
// set and cleared from the page.

// How long a list waits for processes that have not yet answered a change (as `dpdb break`
// does), looking again every so often.
const STANDING_TRIES = 20;
const STANDING_EVERY_MS = 250;

function cell(text) {
  const node = document.createElement("td");
  node.textContent = String(text);
  return node;
}

// "armed in 3 of 4; pending in 1": where a breakpoint stands, as `dpdb break` says it.
function standing(bp, total) {
  const armed = bp.processes || 0;
  let words = armed === 0 ? "pending" : "armed in " + armed + " of " + total;
  if (bp.pending) words += "; pending in " + bp.pending;
  if (bp.ambiguous) words += "; ambiguous in " + bp.ambiguous;
  return words;
}

export class Breakpoints {
  constructor(root, ask) {
    this.ask = ask;
    this.rows = root.querySelector("tbody");
    this.said = root.querySelector(".said");
    this.form = root.querySelector("form");
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.add();
    });
    root.querySelector(".refresh").addEventListener("click", () => this.refresh());
    this.rows.addEventListener("click", (event) => {
      const button = event.target.closest("button.clear");
      if (button) this.clear(Number(button.dataset.bp));
    });
  }

  async add() {
    const field = (name) => this.form.elements[name].value.trim();
    const fields = { spec: field("spec"), condition: field("condition") };
    if (field("log")) fields.log = field("log");
    await this.report(await this.ask("break_add", fields));
  }

  async clear(bp) {
    await this.report(await this.ask("break_clear", { bp }));
  }

  async report(result) {
    this.said.textContent = result.message;
    this.said.classList.toggle("failed", !result.ok);
    if (result.ok) await this.refresh();
  }

  async refresh() {
    for (let tries = 0; tries < STANDING_TRIES; tries += 1) {
      const result = await this.ask("break_list", {});
      if (!result.ok) return;
      this.show(result.data);
      if (!result.data.waiting) return;
      await new Promise((done) => setTimeout(done, STANDING_EVERY_MS));
    }
  }

  show(data) {
    const rows = [];
    for (const bp of data.breakpoints || []) {
      const row = document.createElement("tr");
      row.dataset.bp = String(bp.id);
      const clear = document.createElement("button");
      clear.className = "clear";
      clear.dataset.bp = String(bp.id);
      clear.textContent = "clear";
      const action = document.createElement("td");
      action.append(clear);
      row.append(cell(bp.id), cell(bp.spec), cell(bp.condition || ""), cell(bp.log || ""),
                 cell(standing(bp, data.total || 0)), action);
      row.children[4].className = "standing";
      rows.push(row);
    }
    this.rows.replaceChildren(...rows);
  }
}
