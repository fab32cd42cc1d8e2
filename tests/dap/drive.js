// Drives `dpdb dap` with Microsoft's own DAP test client (DebugClient of
// @vscode/debugadapter-testsupport) through one IDE session over a real multi-process job.
// tests/e2e/test_dap.py starts the job and runs this; the environment says where things are:
// DPDB (the executable), DPDB_HUB, PROGRAM (tests/e2e/programs/dap_job.py), its LINE_* numbers,
// and PORT to reach `dpdb dap --listen` instead of starting `dpdb dap` on stdio.
// Prints one JSON line of what it saw; exits non-zero, saying why, on any failed expectation.
'use strict';
const assert = require('assert');
const path = require('path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const env = process.env;
const PROGRAM = env.PROGRAM;
const LINE_WORK = Number(env.LINE_WORK);
const LINE_SECOND = Number(env.LINE_SECOND);
const TIMEOUT = 30000;

function named(variables, name) {
  const found = variables.find((v) => v.name === name);
  assert.ok(found, `no variable ${name} among ${variables.map((v) => v.name)}`);
  return found;
}

async function topFrame(dc, threadId) {
  const trace = await dc.stackTraceRequest({ threadId });
  return trace.body.stackFrames;
}

async function main() {
  const dc = new DebugClient(env.DPDB, 'dap', 'python', { env }, true);
  dc.defaultTimeout = TIMEOUT;
  await (env.PORT ? dc.start(Number(env.PORT)) : dc.start());
  const seen = {};

  const init = await dc.initializeRequest({
    adapterID: 'python', clientID: 'dpdb-tests', linesStartAt1: true, columnsStartAt1: true,
    pathFormat: 'path',
  });
  // Honest capabilities: what works is claimed, what does not yet is not.
  assert.strictEqual(init.body.supportsConfigurationDoneRequest, true);
  assert.strictEqual(init.body.supportsConditionalBreakpoints, true);
  assert.strictEqual(init.body.supportsSetVariable, true);
  assert.strictEqual(init.body.supportsCompletionsRequest, true);
  assert.strictEqual(init.body.supportsLogPoints, true);
  assert.strictEqual(init.body.supportsHitConditionalBreakpoints, false);

  // An unknown request, and one that needs an attach first: error responses, the adapter lives.
  await assert.rejects(dc.customRequest('noSuchRequest', {}), /unknown request "noSuchRequest"/);
  await assert.rejects(dc.threadsRequest(), /before attach/);

  const initialized = dc.waitForEvent('initialized', TIMEOUT);
  await dc.attachRequest({ name: 'dpdb', type: 'python', request: 'attach' });
  await initialized;

  // A conditional breakpoint, set through the protocol, stops the grandchild process.
  const set = await dc.setBreakpointsRequest({
    source: { path: PROGRAM }, breakpoints: [{ line: LINE_WORK, condition: 'n >= 3' }],
  });
  assert.strictEqual(set.body.breakpoints.length, 1);
  assert.strictEqual(set.body.breakpoints[0].verified, true, JSON.stringify(set.body));
  // A logpoint: its messages, formatted in the grandchild, come as output.
  const logged = new Promise((resolve) => dc.on('output', (event) => {
    if (/^dap-log n=\d+ items=500\n$/.test(event.body.output)) resolve(event.body.output);
  }));
  const hits = await dc.setBreakpointsRequest({
    source: { path: PROGRAM }, breakpoints: [{ line: LINE_WORK, condition: 'n >= 3' },
      { line: LINE_SECOND, hitCondition: '5' },
      { line: LINE_SECOND, logMessage: 'dap-log n={n} items={len(items)}' }],
  });
  assert.strictEqual(hits.body.breakpoints[1].verified, false);
  assert.match(hits.body.breakpoints[1].message, /not supported/);
  assert.strictEqual(hits.body.breakpoints[2].verified, true, JSON.stringify(hits.body));
  seen.logged = await logged;

  const firstStop = dc.waitForEvent('stopped', TIMEOUT);
  await dc.configurationDoneRequest();
  const stopped = await firstStop;
  assert.strictEqual(stopped.body.reason, 'breakpoint');
  const threadId = stopped.body.threadId;

  const threads = (await dc.threadsRequest()).body.threads;
  const thread = threads.find((t) => t.id === threadId);
  assert.ok(thread, JSON.stringify(threads));
  assert.match(thread.name, /^pid (\d+) /);
  seen.pid = Number(/^pid (\d+) /.exec(thread.name)[1]);
  seen.threadName = thread.name;

  let frames = await topFrame(dc, threadId);
  assert.strictEqual(frames[0].name, 'work');
  assert.strictEqual(frames[0].line, LINE_WORK);
  assert.strictEqual(frames[0].source.path, PROGRAM);
  assert.strictEqual(frames[1].name, 'grandchild');
  const paged = await dc.stackTraceRequest({ threadId, startFrame: 1, levels: 1 });
  assert.strictEqual(paged.body.stackFrames.length, 1);
  assert.strictEqual(paged.body.stackFrames[0].name, 'grandchild');
  const firstFrameId = frames[0].id;

  const scopes = (await dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
  const locals = scopes.find((s) => s.name === 'Locals');
  assert.ok(locals, JSON.stringify(scopes));
  let variables = (await dc.variablesRequest({ variablesReference: locals.variablesReference }))
    .body.variables;
  const n = Number(named(variables, 'n').value);
  assert.ok(n >= 3, `the condition n >= 3 held: n is ${n}`);
  seen.n = n;
  const items = named(variables, 'items');
  assert.strictEqual(items.indexedVariables, 500);
  // A large container comes in pages.
  const page = (await dc.variablesRequest({
    variablesReference: items.variablesReference, filter: 'indexed', start: 100, count: 5,
  })).body.variables;
  assert.deepStrictEqual(page.map((v) => [v.name, v.value]),
    [['[100]', '100'], ['[101]', '101'], ['[102]', '102'], ['[103]', '103'], ['[104]', '104']]);

  // The caller's frame and its dict, by reference.
  const callerScopes = (await dc.scopesRequest({ frameId: frames[1].id })).body.scopes;
  const callerLocals = (await dc.variablesRequest({
    variablesReference: callerScopes[0].variablesReference,
  })).body.variables;
  const table = named(callerLocals, 'table');
  const entries = (await dc.variablesRequest({ variablesReference: table.variablesReference }))
    .body.variables;
  assert.strictEqual(named(entries, "'name'").value, "'dpdb'");

  // evaluate: watch, hover, and the repl, which runs pdb commands.
  const watch = await dc.evaluateRequest({ expression: 'n * 10', frameId: frames[0].id, context: 'watch' });
  assert.strictEqual(watch.body.result, String(n * 10));
  const hover = await dc.evaluateRequest({ expression: 'items', frameId: frames[0].id, context: 'hover' });
  assert.strictEqual(hover.body.indexedVariables, 500);
  const repl = await dc.evaluateRequest({ expression: 'p len(items) + 1', frameId: frames[0].id, context: 'repl' });
  assert.strictEqual(repl.body.result, '501');
  // The repl completes as pdb's prompt does.
  const completed = await dc.completionsRequest({ text: 'p ite', column: 6, frameId: frames[0].id });
  assert.ok(completed.body.targets.some((t) => t.label === 'items' && t.start === 3 && t.length === 3),
    JSON.stringify(completed.body));
  const where = await dc.evaluateRequest({ expression: 'w', frameId: frames[0].id, context: 'repl' });
  assert.match(where.body.result, /dap_job\.py\(\d+\)work\(\)/);
  await assert.rejects(dc.evaluateRequest({ expression: 'c', frameId: frames[0].id, context: 'repl' }),
    /not run from the repl/);
  await assert.rejects(dc.evaluateRequest({ expression: 'undefined_name', frameId: frames[0].id, context: 'watch' }),
    /NameError/);

  // setVariable changes the paused frame: the line that runs next sees it.
  const changed = await dc.setVariableRequest({ variablesReference: locals.variablesReference, name: 'n', value: '100' });
  assert.strictEqual(changed.body.value, '100');

  // next: pdb's own `next`.
  let step = dc.waitForEvent('stopped', TIMEOUT);
  await dc.nextRequest({ threadId });
  assert.strictEqual((await step).body.reason, 'step');
  frames = await topFrame(dc, threadId);
  assert.strictEqual(frames[0].line, LINE_SECOND);
  const total = await dc.evaluateRequest({ expression: 'total', frameId: frames[0].id, context: 'watch' });
  assert.strictEqual(total.body.result, '200', 'the line after setVariable ran with n = 100');
  // What the IDE held from the earlier stop is gone, and says so.
  await assert.rejects(dc.scopesRequest({ frameId: firstFrameId }), /no frameId|gone/);
  await assert.rejects(dc.stackTraceRequest({ threadId: 987654 }), /no thread 987654/);

  // stepIn: pdb's `step`, to the next line of work().
  step = dc.waitForEvent('stopped', TIMEOUT);
  await dc.stepInRequest({ threadId });
  assert.strictEqual((await step).body.reason, 'step');
  frames = await topFrame(dc, threadId);
  assert.strictEqual(frames[0].line, LINE_SECOND + 1);

  // stepOut: pdb's `return`.
  step = dc.waitForEvent('stopped', TIMEOUT);
  await dc.stepOutRequest({ threadId });
  assert.strictEqual((await step).body.reason, 'step');

  // continue: the thread runs, and the conditional breakpoint stops it at the next call.
  const continued = dc.waitForEvent('continued', TIMEOUT);
  const again = dc.waitForEvent('stopped', TIMEOUT);
  await dc.continueRequest({ threadId });
  assert.strictEqual((await continued).body.threadId, threadId);
  const second = await again;
  assert.strictEqual(second.body.threadId, threadId);
  assert.strictEqual(second.body.reason, 'breakpoint');
  frames = await topFrame(dc, threadId);
  assert.strictEqual(frames[0].line, LINE_WORK);

  // Disconnect while it is paused: it stays paused, for a terminal; the job runs on.
  await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [] });
  await dc.disconnectRequest({ terminateDebuggee: false });
  process.stdout.write(JSON.stringify(seen) + '\n');
}

// The job starts after the IDE attached: its grandchild appears as a thread when it stops; a
// thread that runs is paused by the IDE's pause button (dpdb pause underneath).
async function late() {
  const dc = new DebugClient(env.DPDB, 'dap', 'python', { env }, true);
  dc.defaultTimeout = TIMEOUT;
  await dc.start();
  await dc.initializeRequest({ adapterID: 'python', linesStartAt1: true, columnsStartAt1: true });
  const initialized = dc.waitForEvent('initialized', TIMEOUT);
  // The IDE's copy of the program would be elsewhere (a laptop): pathMappings, as debugpy's.
  const remoteRoot = path.dirname(PROGRAM);
  const localRoot = '/nonexistent/ide/copy';
  const local = path.join(localRoot, path.basename(PROGRAM));
  await dc.attachRequest({ pathMappings: [{ localRoot, remoteRoot }] });
  await initialized;
  // Good for the first call only: once continued, the grandchild runs until the pause button.
  await dc.setBreakpointsRequest({
    source: { path: local }, breakpoints: [{ line: LINE_WORK, condition: 'n == 0' }] });
  await dc.configurationDoneRequest();
  assert.deepStrictEqual((await dc.threadsRequest()).body.threads, []);
  const started = dc.waitForEvent('thread', TIMEOUT);
  const stopped = dc.waitForEvent('stopped', TIMEOUT);
  process.stdout.write('attached\n');  // test_dap.py starts the job now
  assert.strictEqual((await started).body.reason, 'started');
  const stop = (await stopped).body;
  assert.strictEqual(stop.reason, 'breakpoint');
  // Every process of the job is a thread: the program, its child, and the grandchild that stopped.
  const all = (await dc.threadsRequest()).body.threads;
  assert.strictEqual(all.length, 3, JSON.stringify(all));
  assert.match(all.find((t) => t.id === stop.threadId).name, /^pid \d+ ForkProcess-1$/, JSON.stringify([stop, all]));
  let frames = await topFrame(dc, stop.threadId);
  assert.strictEqual(frames[0].line, LINE_WORK);
  // The frame is shown at the IDE's path; the IDE has no such file, so the process sends it.
  assert.strictEqual(frames[0].source.path, local);
  assert.ok(frames[0].source.sourceReference > 0, JSON.stringify(frames[0]));
  const text = await dc.sourceRequest({ source: frames[0].source, sourceReference: frames[0].source.sourceReference });
  assert.match(text.body.content, /# dap: first line of work/);

  // Continue lets it run; pause stops it wherever it is.
  const continued = dc.waitForEvent('continued', TIMEOUT);
  await dc.continueRequest({ threadId: stop.threadId });
  await continued;
  await assert.rejects(dc.stackTraceRequest({ threadId: stop.threadId }), /is running/);
  const paused = dc.waitForEvent('stopped', TIMEOUT);
  await dc.pauseRequest({ threadId: stop.threadId });
  const pause = (await paused).body;
  assert.strictEqual(pause.threadId, stop.threadId);
  assert.strictEqual(pause.reason, 'pause');
  frames = await topFrame(dc, stop.threadId);
  assert.ok(frames.length > 0);
  const name = (await dc.threadsRequest()).body.threads.find((t) => t.id === stop.threadId).name;
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify({ pid: Number(/^pid (\d+) /.exec(name)[1]) }) + '\n');
}

// A terminal holds the grandchild's session when the IDE attaches: the IDE shows the thread as
// attached elsewhere and leaves it; once the terminal detaches, the IDE takes it.
async function shared() {
  const dc = new DebugClient(env.DPDB, 'dap', 'python', { env }, true);
  dc.defaultTimeout = TIMEOUT;
  await dc.start();
  await dc.initializeRequest({ adapterID: 'python', linesStartAt1: true, columnsStartAt1: true });
  const initialized = dc.waitForEvent('initialized', TIMEOUT);
  await dc.attachRequest({});
  await initialized;
  await dc.configurationDoneRequest();
  const threads = (await dc.threadsRequest()).body.threads.filter(
    (t) => /\(paused, attached elsewhere\)$/.test(t.name));
  assert.strictEqual(threads.length, 1, JSON.stringify(threads));
  await assert.rejects(dc.stackTraceRequest({ threadId: threads[0].id }), /is running/);
  const stopped = dc.waitForEvent('stopped', TIMEOUT);
  process.stdout.write('attached\n');  // test_dap.py detaches the terminal now
  const stop = (await stopped).body;
  assert.strictEqual(stop.threadId, threads[0].id);
  const frames = await topFrame(dc, stop.threadId);
  assert.strictEqual(frames[0].line, LINE_WORK);
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify({ pid: Number(/^pid (\d+) /.exec(threads[0].name)[1]) }) + '\n');
}

// The IDE dies while the grandchild is paused under it: no disconnect, its adapter's input just
// ends. The job runs on, the session stays paused for a terminal, the IDE's breakpoint goes.
async function dies() {
  const dc = new DebugClient(env.DPDB, 'dap', 'python', { env }, true);
  dc.defaultTimeout = TIMEOUT;
  await dc.start();
  await dc.initializeRequest({ adapterID: 'python', linesStartAt1: true, columnsStartAt1: true });
  const initialized = dc.waitForEvent('initialized', TIMEOUT);
  await dc.attachRequest({});
  await initialized;
  await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [{ line: LINE_WORK }] });
  const stopped = dc.waitForEvent('stopped', TIMEOUT);
  await dc.configurationDoneRequest();
  const stop = (await stopped).body;
  const name = (await dc.threadsRequest()).body.threads.find((t) => t.id === stop.threadId).name;
  process.stdout.write(JSON.stringify({ pid: Number(/^pid (\d+) /.exec(name)[1]) }) + '\n');
  process.kill(process.pid, 'SIGKILL');
}

const scenarios = { late, shared, dies };
(scenarios[env.SCENARIO] || main)().then(() => process.exit(0), (error) => {
  process.stderr.write(`drive.js: ${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
