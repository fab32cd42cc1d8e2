// Drives `dpdb dap` with Microsoft's own DAP test client (DebugClient of
// @vscode/debugadapter-testsupport) through one IDE session over a real multi-process job.
// tests/e2e/test_dap.py starts the job and runs this; the environment says where things are:
// DPDB (the executable), DPDB_HUB, PROGRAM (tests/e2e/programs/dap_job.py), its LINE_* numbers,
// and PORT to reach `dpdb dap --listen` instead of starting `dpdb dap` on stdio.
// Prints one JSON line of what it saw; exits non-zero, saying why, on any failed expectation.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');

const env = process.env;
const PROGRAM = env.PROGRAM;
const LINE_WORK = Number(env.LINE_WORK);
const LINE_SECOND = Number(env.LINE_SECOND);
const LINE_CALL = Number(env.LINE_CALL);

const { TIMEOUT, named, stoppedFor, topFrame, connect, pidOf } = require('./client');

async function main() {
  const seen = {};
  const dc = await connect({ name: 'dpdb', type: 'python', request: 'attach' }, async (dc, init) => {
    // Honest capabilities: what works is claimed, what does not is not.
    assert.strictEqual(init.body.supportsConfigurationDoneRequest, true);
    assert.strictEqual(init.body.supportsConditionalBreakpoints, true);
    assert.strictEqual(init.body.supportsSetVariable, true);
    assert.strictEqual(init.body.supportsCompletionsRequest, true);
    assert.strictEqual(init.body.supportsLogPoints, true);
    assert.strictEqual(init.body.supportsHitConditionalBreakpoints, true);
    assert.strictEqual(init.body.supportsTerminateRequest, true);
    assert.strictEqual(init.body.supportsExceptionInfoRequest, true);
    assert.deepStrictEqual(init.body.exceptionBreakpointFilters.map((f) => f.filter), ['raised', 'uncaught']);
    assert.strictEqual(init.body.supportsStepBack, false);
    // An unknown request, and one that needs an attach first: error responses, the adapter lives.
    await assert.rejects(dc.customRequest('noSuchRequest', {}), /unknown request "noSuchRequest"/);
    await assert.rejects(dc.threadsRequest(), /before attach/);
  });

  // A logpoint: its messages, formatted in the grandchild, come as output. Set first and alone:
  // the conditional breakpoint below stops the grandchild at n >= 3 (0.6 s into the job), and a
  // logpoint armed after that stop would wait for the continue (a loaded CI machine took longer).
  // Bounded, saying what did not come (an unbounded wait here once hung the driver for good).
  const logged = new Promise((resolve, reject) => {
    const late = setTimeout(() => reject(new Error('no output event with the logpoint\'s message '
      + `(dap-log n=… items=500) within ${TIMEOUT} ms`)), TIMEOUT);
    dc.on('output', (event) => {
      if (/^dap-log n=\d+ items=500\n$/.test(event.body.output)) {
        clearTimeout(late);
        resolve(event.body.output);
      }
    });
  });
  const set = await dc.setBreakpointsRequest({
    source: { path: PROGRAM },
    breakpoints: [{ line: LINE_SECOND, logMessage: 'dap-log n={n} items={len(items)}' }],
  });
  assert.strictEqual(set.body.breakpoints.length, 1);
  assert.strictEqual(set.body.breakpoints[0].verified, true, JSON.stringify(set.body));
  seen.logged = await logged;

  // A conditional breakpoint, set through the protocol, stops the grandchild process.
  const hits = await dc.setBreakpointsRequest({
    source: { path: PROGRAM }, breakpoints: [{ line: LINE_WORK, condition: 'n >= 3' },
      { line: LINE_SECOND, hitCondition: '% 5' },
      { line: LINE_SECOND, logMessage: 'dap-log n={n} items={len(items)}' }],
  });
  // A hit count that pdb's ignore count cannot say is refused, saying which ones can.
  assert.strictEqual(hits.body.breakpoints[1].verified, false);
  assert.match(hits.body.breakpoints[1].message, /N or >= N/);
  assert.strictEqual(hits.body.breakpoints[0].verified, true, JSON.stringify(hits.body));
  assert.strictEqual(hits.body.breakpoints[2].verified, true, JSON.stringify(hits.body));

  const firstStop = dc.waitForEvent('stopped', TIMEOUT);
  await dc.configurationDoneRequest();
  const stopped = await firstStop;
  assert.strictEqual(stopped.body.reason, 'breakpoint');
  const threadId = stopped.body.threadId;

  const threads = (await dc.threadsRequest()).body.threads;
  const thread = threads.find((t) => t.id === threadId);
  assert.ok(thread, JSON.stringify(threads));
  assert.match(thread.name, /^pid (\d+) /);
  seen.pid = pidOf(thread.name);
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
  // `q` would end the process's debugging from under the IDE: its disconnect button does that.
  await assert.rejects(dc.evaluateRequest({ expression: 'q', frameId: frames[0].id, context: 'repl' }),
    /not run from the repl/);
  await assert.rejects(dc.evaluateRequest({ expression: 'undefined_name', frameId: frames[0].id, context: 'watch' }),
    /NameError/);

  // setVariable changes the paused frame: the line that runs next sees it.
  const changed = await dc.setVariableRequest({ variablesReference: locals.variablesReference, name: 'n', value: '100' });
  assert.strictEqual(changed.body.value, '100');

  // The IDE's steps: pdb's echo of where they went is not sent (the IDE shows it itself).
  const echoes = [];
  const echoed = (event) => { if (/^> |--Return--|--Call--/m.test(event.body.output)) echoes.push(event.body.output); };
  dc.on('output', echoed);

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

  // stepOut: in the caller, after the call returned (not at pdb's --Return-- in work()).
  step = dc.waitForEvent('stopped', TIMEOUT);
  await dc.stepOutRequest({ threadId });
  assert.strictEqual((await step).body.reason, 'step');
  frames = await topFrame(dc, threadId);
  assert.deepStrictEqual([frames[0].name, frames[0].line], ['grandchild', LINE_CALL + 1]);
  // next, to the call again (the loop's lines between: bounded), never in work() nor at a return.
  for (let left = 8; frames[0].line !== LINE_CALL; left -= 1) {
    assert.ok(left > 0, `no stop at the call of work() within 8 steps: at ${frames[0].line}`);
    step = dc.waitForEvent('stopped', TIMEOUT);
    await dc.nextRequest({ threadId });
    await step;
    frames = await topFrame(dc, threadId);
    assert.strictEqual(frames[0].name, 'grandchild', JSON.stringify(frames[0]));
  }
  // stepIn: on the first line of work()'s body, not at pdb's --Call-- on its def line.
  step = dc.waitForEvent('stopped', TIMEOUT);
  await dc.stepInRequest({ threadId });
  assert.strictEqual((await step).body.reason, 'step');
  frames = await topFrame(dc, threadId);
  assert.deepStrictEqual([frames[0].name, frames[0].line], ['work', LINE_WORK]);
  // next to work()'s last line, and off its end: in the caller, not at pdb's --Return-- (which
  // would stop in work() again, on its return line).
  const lines = [];
  for (let i = 0; i < 3; i += 1) {
    step = dc.waitForEvent('stopped', TIMEOUT);
    await dc.nextRequest({ threadId });
    assert.strictEqual((await step).body.reason, 'step');
    frames = await topFrame(dc, threadId);
    lines.push([frames[0].name, frames[0].line]);
  }
  assert.deepStrictEqual(lines.slice(0, 2), [['work', LINE_SECOND], ['work', LINE_SECOND + 1]]);
  assert.strictEqual(lines[2][0], 'grandchild', JSON.stringify(lines));
  dc.removeListener('output', echoed);
  assert.deepStrictEqual(echoes, []);

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

  // Disconnect while it is paused, asking to suspend it: it stays paused, for a terminal; the
  // job runs on.
  await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [] });
  await dc.disconnectRequest({ terminateDebuggee: false, suspendDebuggee: true });
  process.stdout.write(JSON.stringify(seen) + '\n');
}

// The job starts after the IDE attached: its grandchild appears as a thread when it stops; a
// thread that runs is paused by the IDE's pause button (dpdb pause underneath).
async function late() {
  // The IDE's copy of the program would be elsewhere (a laptop): pathMappings, as debugpy's.
  const remoteRoot = path.dirname(PROGRAM);
  const localRoot = '/nonexistent/ide/copy';
  const local = path.join(localRoot, path.basename(PROGRAM));
  const dc = await connect({ pathMappings: [{ localRoot, remoteRoot }] });
  await dc.setBreakpointsRequest({
    source: { path: local }, breakpoints: [{ line: LINE_WORK }, { line: LINE_SECOND }] });
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

  // The breakpoints taken out, then continue at once, as an IDE does when they are unchecked:
  // the grandchild runs on (the next line held the second) until the pause button.
  await dc.setBreakpointsRequest({ source: { path: local }, breakpoints: [] });
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
  // A plain disconnect (the spec's defaults): what the IDE paused runs on.
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify({ pid: pidOf(name) }) + '\n');
}

// A terminal holds the grandchild's session when the IDE attaches: the IDE shows the thread as
// attached elsewhere and leaves it; once the terminal detaches, the IDE takes it.
async function shared() {
  const dc = await connect();
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
  await dc.disconnectRequest({ suspendDebuggee: true });
  process.stdout.write(JSON.stringify({ pid: pidOf(threads[0].name) }) + '\n');
}

// The IDE dies while the grandchild is paused under it: no disconnect, its adapter's input just
// ends. The job runs on, the session stays paused for a terminal, the IDE's breakpoint goes.
async function dies() {
  const dc = await connect();
  await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [{ line: LINE_WORK }] });
  const stopped = dc.waitForEvent('stopped', TIMEOUT);
  await dc.configurationDoneRequest();
  const stop = (await stopped).body;
  const name = (await dc.threadsRequest()).body.threads.find((t) => t.id === stop.threadId).name;
  process.stdout.write(JSON.stringify({ pid: pidOf(name) }) + '\n');
  process.kill(process.pid, 'SIGKILL');
}

// Hit counts, as pdb's ignore counts, counted in the process from the moment it armed them: the
// job starts after the attach, so the grandchild's calls of work() are counted from its first.
async function hits() {
  const dc = await connect();
  const LINE_CALL = Number(env.LINE_CALL);
  const functions = await dc.setFunctionBreakpointsRequest({
    breakpoints: [{ name: 'work' }, { name: 'work', hitCondition: '3' }] });
  // No process yet: armed nowhere, so not verified (an event says so once it is).
  assert.strictEqual(functions.body.breakpoints[0].verified, false, JSON.stringify(functions.body));
  assert.match(functions.body.breakpoints[0].message, /^pending/, JSON.stringify(functions.body));
  // Not claimed for function breakpoints (docs/ide.md says why).
  assert.strictEqual(functions.body.breakpoints[1].verified, false, JSON.stringify(functions.body));
  assert.match(functions.body.breakpoints[1].message, /function breakpoints/);
  await dc.configurationDoneRequest();
  const stopped = stoppedFor(dc, 'the function breakpoint on work()');
  process.stdout.write('attached\n');  // test_dap.py starts the job now
  const stop = (await stopped).body;
  assert.strictEqual(stop.reason, 'breakpoint');
  const threadId = stop.threadId;
  const valueOf = async (expression) => {
    const frames = await topFrame(dc, threadId);
    return (await dc.evaluateRequest({ expression, frameId: frames[0].id, context: 'watch' })).body.result;
  };
  // The function breakpoint: a call of work(), at its first line.
  let frames = await topFrame(dc, threadId);
  assert.strictEqual(frames[0].name, 'work');
  assert.strictEqual(frames[0].line, LINE_WORK);
  const n = Number(await valueOf('n'));

  // A line's hit count, counted from the moment it is armed: the second call from now.
  await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  const set = await dc.setBreakpointsRequest({
    source: { path: PROGRAM }, breakpoints: [{ line: LINE_CALL, hitCondition: '>= 2' },
      { line: LINE_CALL, hitCondition: '== 3' }] });
  assert.strictEqual(set.body.breakpoints[0].verified, true, JSON.stringify(set.body));
  assert.strictEqual(set.body.breakpoints[1].verified, false, JSON.stringify(set.body));
  let again = stoppedFor(dc, `the call of work() with hitCondition '>= 2' (n = ${n})`);
  await dc.continueRequest({ threadId });
  assert.strictEqual((await again).body.reason, 'breakpoint');
  frames = await topFrame(dc, threadId);
  assert.strictEqual(frames[0].line, LINE_CALL);
  assert.strictEqual(await valueOf('n'), String(n + 2));
  // From then on it stops at every hit, as after pdb's `ignore`.
  again = stoppedFor(dc, `the call of work() after its hit count (n = ${n})`);
  await dc.continueRequest({ threadId });
  await again;
  assert.strictEqual(await valueOf('n'), String(n + 3));
  const name = (await dc.threadsRequest()).body.threads.find((t) => t.id === threadId).name;
  await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [] });
  await dc.disconnectRequest({ suspendDebuggee: true });  // left paused, for a terminal
  process.stdout.write(JSON.stringify({ pid: pidOf(name) }) + '\n');
}

// Exception breakpoints over a job started after the attach (tests/e2e/programs/dap_raise.py):
// `raised` stops in the forked child where its code raises (RAISED=1: Python 3.12+), the repl's
// `n` and `c` run on from there; `uncaught` stops where the child's exception would end it;
// once the job has ended the IDE is told (thread exited, exited, terminated).
async function exceptions() {
  const dc = await connect();
  const raised = env.RAISED === '1';
  const filters = raised ? ['raised', 'uncaught'] : ['uncaught'];
  const set = await dc.setExceptionBreakpointsRequest({ filters });
  assert.deepStrictEqual(set.body.breakpoints.map((b) => b.verified), filters.map(() => true));
  const unknown = await dc.setExceptionBreakpointsRequest({ filters: ['sometimes'] });
  assert.strictEqual(unknown.body.breakpoints[0].verified, false);
  assert.match(unknown.body.breakpoints[0].message, /no exception filter "sometimes"/);
  await dc.setExceptionBreakpointsRequest({ filters });
  await dc.configurationDoneRequest();
  let stopped = dc.waitForEvent('stopped', TIMEOUT);
  process.stdout.write('attached\n');  // test_dap.py starts the job now
  let stop;
  let threadId;
  const seen = {};
  if (raised) {
    stop = (await stopped).body;
    threadId = stop.threadId;
    assert.strictEqual(stop.reason, 'exception');
    let info = (await dc.exceptionInfoRequest({ threadId })).body;
    assert.strictEqual(info.exceptionId, 'ValueError');
    assert.strictEqual(info.description, 'bad row 0');
    assert.strictEqual(info.breakMode, 'always');
    assert.match(info.details.stackTrace, /ValueError: bad row 0/);
    let frames = await topFrame(dc, threadId);
    assert.strictEqual(frames[0].name, 'risky');
    assert.strictEqual(frames[0].line, Number(env.LINE_RAISE));
    assert.strictEqual(frames[1].name, 'rows');
    // `n` typed in the debug console: the thread runs (continued), and stops after a step.
    let continued = dc.waitForEvent('continued', TIMEOUT);
    stopped = dc.waitForEvent('stopped', TIMEOUT);
    const typed = await dc.evaluateRequest({ expression: 'n', frameId: frames[0].id, context: 'repl' });
    assert.strictEqual(typed.body.result, '');
    assert.strictEqual((await continued).body.threadId, threadId);
    assert.strictEqual((await stopped).body.reason, 'step');
    seen.afterNext = (await topFrame(dc, threadId)).map((f) => `${f.name}:${f.line}`)[0];
    await assert.rejects(dc.exceptionInfoRequest({ threadId }), /did not stop for an exception/);
    // `c`: it runs to the next raise.
    continued = dc.waitForEvent('continued', TIMEOUT);
    stopped = dc.waitForEvent('stopped', TIMEOUT);
    frames = await topFrame(dc, threadId);
    await dc.evaluateRequest({ expression: 'c', frameId: frames[0].id, context: 'repl' });
    await continued;
    assert.strictEqual((await stopped).body.reason, 'exception');
    info = (await dc.exceptionInfoRequest({ threadId })).body;
    assert.strictEqual(info.description, 'bad row 1');
    // Raised exceptions off: the thread runs on until the uncaught one.
    await dc.setExceptionBreakpointsRequest({ filters: ['uncaught'] });
    stopped = dc.waitForEvent('stopped', TIMEOUT);
    await dc.continueRequest({ threadId });
  }
  fs.writeFileSync(env.GO, 'go');  // the child raises a KeyError it does not catch
  stop = (await stopped).body;
  assert.strictEqual(stop.reason, 'exception');
  if (raised) assert.strictEqual(stop.threadId, threadId);
  threadId = stop.threadId;
  const info = (await dc.exceptionInfoRequest({ threadId })).body;
  assert.strictEqual(info.exceptionId, 'KeyError');
  assert.strictEqual(info.breakMode, 'unhandled');
  const frames = await topFrame(dc, threadId);
  assert.strictEqual(frames[0].line, Number(env.LINE_UNCAUGHT));
  const name = (await dc.threadsRequest()).body.threads.find((t) => t.id === threadId).name;
  // The child ends with its exception, the program after it with its status: the job ended.
  const exited = dc.waitForEvent('exited', TIMEOUT);
  const terminated = dc.waitForEvent('terminated', TIMEOUT);
  await dc.continueRequest({ threadId });
  seen.exitCode = (await exited).body.exitCode;
  await terminated;
  // A thread that is gone: an error response, the adapter lives on.
  await assert.rejects(dc.stackTraceRequest({ threadId }), new RegExp(`no thread ${threadId}`));
  assert.deepStrictEqual((await dc.threadsRequest()).body.threads, []);
  await dc.disconnectRequest({});
  seen.pid = pidOf(name);
  process.stdout.write(JSON.stringify(seen) + '\n');
}

// `uncaught` stops where a framework catches the exception too: a task that raises in a
// ProcessPoolExecutor's worker (tests/e2e/programs/pool_raise.py), in the worker, at the raise,
// with its locals; continued, the caller gets its exception and the job ends.
async function caught() {
  const dc = await connect();
  await dc.setExceptionBreakpointsRequest({ filters: ['uncaught'] });
  await dc.configurationDoneRequest();
  const stopped = dc.waitForEvent('stopped', TIMEOUT);
  process.stdout.write('attached\n');  // test_dap.py starts the job now
  const stop = (await stopped).body;
  assert.strictEqual(stop.reason, 'exception');
  const threadId = stop.threadId;
  const info = (await dc.exceptionInfoRequest({ threadId })).body;
  assert.strictEqual(info.exceptionId, 'ZeroDivisionError');
  assert.strictEqual(info.breakMode, 'userUnhandled');
  assert.match(info.details.stackTrace, /in share/);
  const frames = await topFrame(dc, threadId);
  assert.strictEqual(frames[0].name, 'share');
  assert.strictEqual(frames[0].line, Number(env.LINE_DIVIDE));
  const scopes = (await dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
  const locals = (await dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body;
  assert.strictEqual(named(locals.variables, 'rows').value, '0');
  const name = (await dc.threadsRequest()).body.threads.find((t) => t.id === threadId).name;
  const exited = dc.waitForEvent('exited', TIMEOUT);
  const terminated = dc.waitForEvent('terminated', TIMEOUT);
  await dc.continueRequest({ threadId });
  const exitCode = (await exited).body.exitCode;
  await terminated;
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify({ pid: pidOf(name), exitCode }) + '\n');
}

// terminate ends the job: each process is released and sent SIGTERM through the hub; the IDE sees
// every thread exit, then exited and terminated.
async function terminate() {
  const dc = await connect();
  await dc.setBreakpointsRequest({ source: { path: PROGRAM }, breakpoints: [{ line: LINE_WORK }] });
  const stopped = dc.waitForEvent('stopped', TIMEOUT);
  await dc.configurationDoneRequest();
  const stop = (await stopped).body;
  const threads = (await dc.threadsRequest()).body.threads;
  assert.strictEqual(threads.length, 3, JSON.stringify(threads));
  const exitedThreads = new Set();
  dc.on('thread', (event) => { if (event.body.reason === 'exited') exitedThreads.add(event.body.threadId); });
  const exited = dc.waitForEvent('exited', TIMEOUT);
  const terminated = dc.waitForEvent('terminated', TIMEOUT);
  await dc.terminateRequest({});
  await exited;
  await terminated;
  assert.deepStrictEqual([...exitedThreads].sort(), threads.map((t) => t.id).sort());
  await assert.rejects(dc.stackTraceRequest({ threadId: stop.threadId }), /no thread/);
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify({ pids: threads.map((t) => pidOf(t.name)) }) + '\n');
}

// A source the IDE names by another path than the one the job runs (through a symlinked
// directory, or the other way): NAMED at LINE_JOB. Where it stopped, and what the IDE was told.
async function linked() {
  const dc = await connect();
  const line = Number(env.LINE_JOB);
  const set = await dc.setBreakpointsRequest({ source: { path: env.NAMED }, breakpoints: [{ line }] });
  // Verified once the job runs the file, by a `breakpoint` event.
  const verified = new Promise((resolve) => dc.on('breakpoint', (event) => {
    if (event.body.breakpoint.id === set.body.breakpoints[0].id && event.body.breakpoint.verified) resolve(true);
  }));
  await dc.configurationDoneRequest();
  const stopped = stoppedFor(dc, `the breakpoint at ${env.NAMED}:${line}`);
  process.stdout.write('attached\n');  // test_trust.py starts the job now
  const stop = (await stopped).body;
  const frames = await topFrame(dc, stop.threadId);
  const seen = { reason: stop.reason, path: frames[0].source.path, line: frames[0].line,
    verified: set.body.breakpoints[0].verified,
    verifiedLater: await Promise.race([verified, new Promise((resolve) => setTimeout(resolve, TIMEOUT, false))]) };
  await dc.setBreakpointsRequest({ source: { path: env.NAMED }, breakpoints: [] });
  await dc.continueRequest({ threadId: stop.threadId });
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify(seen) + '\n');
}

const scenarios = { late, shared, dies, hits, exceptions, caught, terminate, linked };
(scenarios[env.SCENARIO] || main)().then(() => process.exit(0), (error) => {
  process.stderr.write(`drive.js: ${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
