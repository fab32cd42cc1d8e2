// One IDE flow, the same for `dpdb dap` and for debugpy's adapter (ADAPTER=dpdb|debugpy), on
// tests/e2e/programs/dap_single.py, through Microsoft's DebugClient: attach, a breakpoint, the
// first stop, stackTrace, scopes, variables, evaluate, setVariable, STEPS `next`s, continue,
// disconnect. Prints what it measured, as JSON: milliseconds from the attach request to the
// first stopped event, and each step's round trip (next request to stopped event).
'use strict';
const assert = require('assert');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const env = process.env;
const TIMEOUT = 30000;
const LINE_WORK = Number(env.LINE_WORK);
const STEPS = Number(env.STEPS || 5);

// MODE=exceptions (tests/e2e/programs/dap_raise.py): the `raised` exception filter, its stopped
// event, exceptionInfo, the stack at the raise, and a continue to the next raise.
async function exceptions(dc, attached) {
  const set = await dc.setExceptionBreakpointsRequest({ filters: ['raised'] });
  const first = dc.waitForEvent('stopped', TIMEOUT);
  await dc.configurationDoneRequest();
  await attached;
  const stops = [];
  let stopped = first;
  for (let i = 0; i < 2; i++) {
    const stop = (await stopped).body;
    const info = (await dc.exceptionInfoRequest({ threadId: stop.threadId })).body;
    const frames = (await dc.stackTraceRequest({ threadId: stop.threadId })).body.stackFrames;
    stops.push({ reason: stop.reason, exceptionId: info.exceptionId, breakMode: info.breakMode,
      description: info.description.replace(/\d+/, 'N'),
      frame: `${frames[0].name}:${frames[0].line}`, caller: frames[1].name });
    if (i === 0) {
      stopped = dc.waitForEvent('stopped', TIMEOUT);
      await dc.continueRequest({ threadId: stop.threadId });
    }
  }
  await dc.setExceptionBreakpointsRequest({ filters: [] });
  // debugpy answers with no body; DAP allows that.
  const answered = set.body && set.body.breakpoints;
  return { verified: answered ? answered.map((b) => b.verified) : null, stops };
}

async function main() {
  const debugpy = env.ADAPTER === 'debugpy';
  // Both serve DAP on a port, as VS Code's `"connect": {"host", "port"}` reaches them:
  // `python -m debugpy --listen` and `dpdb dap --listen`.
  const dc = new DebugClient('unused', 'unused', debugpy ? 'debugpy' : 'python');
  await dc.start(Number(env.PORT));
  await dc.initializeRequest({ adapterID: debugpy ? 'debugpy' : 'python', linesStartAt1: true,
    columnsStartAt1: true, pathFormat: 'path' });
  const started = process.hrtime.bigint();
  // As VS Code does: configuration goes on while the attach is answered (debugpy answers it
  // only after configurationDone).
  const initialized = dc.waitForEvent('initialized', TIMEOUT);
  const attached = dc.attachRequest(debugpy
    ? { connect: { host: '127.0.0.1', port: Number(env.PORT) }, justMyCode: false }
    : { connect: { host: '127.0.0.1', port: Number(env.PORT) } });
  await initialized;
  if (env.MODE === 'exceptions') {
    const seen = await exceptions(dc, attached);
    await dc.disconnectRequest({ terminateDebuggee: false });
    process.stdout.write(JSON.stringify(seen) + '\n');
    return;
  }
  const set = await dc.setBreakpointsRequest({
    source: { path: env.PROGRAM }, breakpoints: [{ line: LINE_WORK }] });
  // Verified where armed: dpdb's is pending if the process has not connected to the hub yet.
  const [bp] = set.body.breakpoints;
  assert.ok(bp.verified || /^pending/.test(bp.message), JSON.stringify(set.body));
  const first = dc.waitForEvent('stopped', TIMEOUT);
  await dc.configurationDoneRequest();
  await attached;
  const stop = (await first).body;
  const firstStopMs = Number(process.hrtime.bigint() - started) / 1e6;
  assert.strictEqual(stop.reason, 'breakpoint');
  const threadId = stop.threadId;

  const frames = (await dc.stackTraceRequest({ threadId })).body.stackFrames;
  assert.strictEqual(frames[0].name, 'work');
  assert.strictEqual(frames[0].line, LINE_WORK);
  const scopes = (await dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
  const locals = scopes[0];
  const variables = (await dc.variablesRequest({ variablesReference: locals.variablesReference }))
    .body.variables;
  const n = Number(variables.find((v) => v.name === 'n').value);
  const items = variables.find((v) => v.name === 'items');
  assert.ok(items.variablesReference > 0);
  const watch = await dc.evaluateRequest({ expression: 'n * 10', frameId: frames[0].id, context: 'watch' });
  assert.strictEqual(watch.body.result, String(n * 10));
  const changed = await dc.setVariableRequest({
    variablesReference: locals.variablesReference, name: 'n', value: '7' });
  assert.strictEqual(changed.body.value, '7');

  const steps = [];
  for (let i = 0; i < STEPS; i++) {
    const stepped = dc.waitForEvent('stopped', TIMEOUT);
    const before = process.hrtime.bigint();
    await dc.nextRequest({ threadId });
    assert.strictEqual((await stepped).body.reason, 'step');
    steps.push(Number(process.hrtime.bigint() - before) / 1e6);
  }
  const after = (await dc.stackTraceRequest({ threadId })).body.stackFrames;
  assert.strictEqual(after[0].name, 'work');
  const total = await dc.evaluateRequest({ expression: 'total >= 14', frameId: after[0].id, context: 'watch' });
  assert.strictEqual(total.body.result, 'True', 'the steps ran with n = 7');

  await dc.setBreakpointsRequest({ source: { path: env.PROGRAM }, breakpoints: [] });
  await dc.continueRequest({ threadId });
  await dc.disconnectRequest({ terminateDebuggee: false });
  process.stdout.write(JSON.stringify({ firstStopMs, steps }) + '\n');
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`compare.js: ${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
