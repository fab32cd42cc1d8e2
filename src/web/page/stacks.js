// The job's stacks (`dpdb stacks`), the processes that stand in the same places shown once with
// how many they are (dpdb web groups them as `dpdb stacks` does a large job).

export class Stacks {
  constructor(root, ask) {
    this.ask = ask;
    this.text = root.querySelector("pre");
    root.querySelector("button").addEventListener("click", () => this.refresh());
  }

  async refresh() {
    this.text.textContent = "asking every process…";
    const result = await this.ask("stacks", {});
    this.text.textContent = result.ok ? result.data.grouped || "no process answered"
                                      : result.message;
  }
}
