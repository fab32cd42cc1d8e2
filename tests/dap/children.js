// `dpdb dap` with a client that takes the reverse request startDebugging (as VS Code and nvim-dap
// do): the attach is the job's session, and each process of the job (tests/e2e/programs/
// dap_pool.py: its main process and three pool workers) becomes a child session of its own, each
// one another `dpdb dap` attached with the configuration the job's session gave.
//
// Each child session follows nvim-dap's default (auto_continue_if_many_stopped): a thread that
// stops while another thread of its session has the focus is continued at once. With one session
// per process none of the workers' stops may be lost that way: the three stay stopped until each
// is resumed on its own, and the job then ends. What each process writes after its session is up
// comes as `output` events of its own session, stdout and stderr apart, and nothing of dpdb's own
// in them.
// Environment: DPDB, DPDB_HUB, PROGRAM (dap_pool.py), LINE_TASK, JUST_MY_CODE; PORT/HOST as for
// drive.js.
// Prints one JSON line of what it saw; exits non-zero, saying why, on any failed expectation.
'use strict';
const assert = require('assert');

const { TIMEOUT, connect, topFrame, pidOf } = require('./client');

const env = process.env;
const LINE_TASK = Number(env.LINE_TASK);
// justMyCode as the attach leaves it (on), or "off": false in the attach configuration.
const JUST_MY_CODE = env.JUST_MY_CODE !== 'off';

// `promise`, or an error saying `what()` did not come within `ms`.
function bounded(promise, ms, what) {
  let timer;
  const late = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what()}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function frame(message) {
  const json = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(json, 'utf8')}\r\n\r\n${json}`;
}

// A child session: its client, the thread the IDE focuses, and what it saw.
class Child {
  constructor(configuration, onStop) {
    this.configuration = configuration;
    this.onStop = onStop;
    this.stops = [];
    this.autoContinued = [];
    this.focus = null;
    this.outputs = [];
  }

  async start() {
    this.dc = await connect(this.configuration);
    this.ended = this.dc.waitForEvent('terminated', 4 * TIMEOUT);
    this.dc.on('output', (event) => this.outputs.push(event.body));
    this.dc.on('stopped', (event) => {
      const threadId = event.body.threadId;
      this.stops.push(threadId);
      if (this.focus === null || this.focus === threadId) {
        if (this.focus === null) this.onStop();
        this.focus = threadId;
        return;
      }
      // nvim-dap's default: another thread of this session has the focus.
      this.autoContinued.push(threadId);
      this.dc.continueRequest({ threadId }).catch(() => {});
    });
    await this.dc.configurationDoneRequest();
  }
}

async function main() {
  const children = [];
  let started = null;
  const allStarted = new Promise((resolve) => { started = resolve; });
  let stoppedSessions = 0;
  let allStopped = null;
  const threeStopped = new Promise((resolve) => { allStopped = resolve; });
  const onStop = () => { stoppedSessions += 1; if (stoppedSessions === 3) allStopped(); };
  const attach = { name: 'dpdb', type: 'python', request: 'attach', ...(JUST_MY_CODE ? {} : { justMyCode: false }) };
  const jobOutputs = [];
  const dc = await connect(attach, async (dc, init) => {
    dc.on('output', (event) => jobOutputs.push(event.body));
    assert.ok(init.body.supportsConfigurationDoneRequest);
    // Reverse requests: DebugClient drops them (they are no response of its own), so they are
    // taken before it sees them.
    const dispatch = dc.dispatch.bind(dc);
    dc.dispatch = (body) => {
      const message = JSON.parse(body);
      if (message.type !== 'request') return dispatch(body);
      assert.strictEqual(message.command, 'startDebugging', body);
      assert.strictEqual(message.arguments.request, 'attach');
      dc.outputStream.write(frame({ seq: 0, type: 'response', request_seq: message.seq,
        command: message.command, success: true }));
      const child = new Child(message.arguments.configuration, onStop);
      children.push(child);
      child.started = child.start();
      if (children.length === 4) started();
    };
  }, { supportsStartDebuggingRequest: true });
  const set = await dc.setBreakpointsRequest({
    source: { path: env.PROGRAM }, breakpoints: [{ line: LINE_TASK }],
  });
  // Before the job: pending, and verified by an event once a process arms it.
  assert.strictEqual(set.body.breakpoints[0].verified, false, JSON.stringify(set.body));
  const verified = new Promise((resolve) => dc.on('breakpoint', (event) => {
    if (event.body.breakpoint.id === set.body.breakpoints[0].id && event.body.breakpoint.verified) resolve(event.body);
  }));
  const jobExited = dc.waitForEvent('exited', 4 * TIMEOUT);
  const jobEnded = dc.waitForEvent('terminated', 4 * TIMEOUT);
  await dc.configurationDoneRequest();
  // The job's session shows no threads: each process is a session of its own.
  assert.deepStrictEqual((await dc.threadsRequest()).body.threads, []);
  process.stdout.write('attached\n');  // test_dap.py starts the job now

  await bounded(allStarted, 2 * TIMEOUT, () => `${children.length} child sessions of 4 (main process, 3 workers)`);
  await Promise.all(children.map((child) => child.started));
  const pids = children.map((child) => child.configuration.pid);
  assert.strictEqual(new Set(pids).size, 4, JSON.stringify(pids));
  for (const child of children) {
    assert.match(child.configuration.name, new RegExp(`^pid ${child.configuration.pid} `));
  }
  await bounded(threeStopped, 2 * TIMEOUT, () => 'three workers stopped: '
    + JSON.stringify(children.map((child) => [child.configuration.pid, child.stops])));
  const workers = children.filter((child) => child.focus !== null);
  assert.strictEqual(workers.length, 3);
  await bounded(verified, TIMEOUT, () => 'the breakpoint verified by an event');

  // Each stopped in its own session, its own process, at the task's line.
  for (const worker of workers) {
    const threads = (await worker.dc.threadsRequest()).body.threads;
    assert.strictEqual(threads.length, 1, JSON.stringify(threads));
    assert.strictEqual(pidOf(threads[0].name), worker.configuration.pid);
    // Named by its launcher after it connected: the name it has now.
    assert.match(threads[0].name, /^pid \d+ ForkPoolWorker-\d+$/);
    const frames = await topFrame(worker.dc, worker.focus);
    assert.strictEqual(frames[0].name, 'work');
    assert.strictEqual(frames[0].line, LINE_TASK);
    const names = frames.map((f) => f.name);
    if (JUST_MY_CODE) {
      // multiprocessing's frames hidden, and the main process's from before the fork.
      assert.deepStrictEqual(names, ['work']);
    } else {
      for (const name of ['worker', '_bootstrap', '<module>']) assert.ok(names.includes(name), JSON.stringify(names));
    }
    // Globals: the module's own names first, its dunders after them.
    const scopes = (await worker.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
    const globals = scopes.find((scope) => scope.name === 'Globals');
    assert.ok(globals, JSON.stringify(scopes));
    const variables = (await worker.dc.variablesRequest({ variablesReference: globals.variablesReference })).body.variables.map((v) => v.name);
    assert.ok(variables.indexOf('work') >= 0 && variables.indexOf('work') < variables.indexOf('__name__'), JSON.stringify(variables));
    assert.ok(!variables[0].startsWith('__'), JSON.stringify(variables));
  }
  // Resumed one by one: the others stay stopped (their frames still answer) until their turn.
  const seen = { pids, resumed: [] };
  for (const [index, worker] of workers.entries()) {
    await worker.dc.continueRequest({ threadId: worker.focus });
    seen.resumed.push(worker.configuration.pid);
    for (const other of workers.slice(index + 1)) {
      const frames = await topFrame(other.dc, other.focus);
      assert.strictEqual(frames[0].line, LINE_TASK);
    }
  }
  // The job ends: every process's session with it, and the job's.
  await Promise.all(children.map((child) => child.ended));
  assert.strictEqual((await jobExited).body.exitCode, 0);
  await jobEnded;
  // The program's output, in each process's own session: what a worker printed after its stop
  // (stdout) and wrote to stderr, and the main process's results; dpdb's own words in neither.
  const written = (child, category) => child.outputs
    .filter((output) => output.category === category).map((output) => output.output).join('');
  for (const worker of workers) {
    const pid = worker.configuration.pid;
    assert.match(written(worker, 'stdout'), new RegExp(`^dap_pool worker ${pid} square \\d\n$`),
      JSON.stringify(worker.outputs));
    assert.strictEqual(written(worker, 'stderr'), `dap_pool worker ${pid} stderr\n`,
      JSON.stringify(worker.outputs));
  }
  const main = children.find((child) => !workers.includes(child));
  assert.match(written(main, 'stdout'), /dap_pool results \[0, 1, 4\]\n$/, JSON.stringify(main.outputs));
  for (const child of children) assert.doesNotMatch(written(child, 'stdout'), /dpdb|^> |--Return--/m);
  // The job's session shows no process's output: each is its own session's.
  assert.deepStrictEqual(jobOutputs.filter((output) => output.category === 'stdout' || output.category === 'stderr'), []);
  seen.autoContinued = workers.reduce((count, worker) => count + worker.autoContinued.length, 0);
  seen.stops = workers.map((worker) => worker.stops.length);
  for (const child of children) await child.dc.disconnectRequest({}).catch(() => {});
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify(seen) + '\n');
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
