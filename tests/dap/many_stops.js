// bench/dap's simultaneous stops: one IDE (Microsoft's DebugClient, taking the reverse request
// startDebugging as VS Code does) on a job of WORKERS processes that all reach one breakpoint at
// once (tests/e2e/programs/dap_many.py), through `dpdb dap --listen` or debugpy's adapter
// (`python -m debugpy --listen`, subProcess: true), ADAPTER=dpdb|debugpy, on PORT.
//
// As VS Code does, each child session is another connection to the adapter, attached with the
// configuration the adapter gave, its breakpoints set, then configured. Prints, as JSON, the
// wall-clock time (ms since the epoch) at which the last of the WORKERS processes' stopped events
// came, for the bench to subtract its launch time from; exits non-zero, saying why, otherwise.
'use strict';
const assert = require('assert');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const env = process.env;
const TIMEOUT = 120000;
const WORKERS = Number(env.WORKERS);
const LINE = Number(env.LINE);
const debugpy = env.ADAPTER === 'debugpy';

function frame(message) {
  const json = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(json, 'utf8')}\r\n\r\n${json}`;
}

const stoppedSessions = new Set();
let allStopped = null;
const everyWorkerStopped = new Promise((resolve) => { allStopped = resolve; });
const sessions = [];

// One session (the job's, or a child's): initialized, attached with `configuration`, its
// breakpoint set, configured. Its first stopped event counts its process as stopped.
async function session(configuration, name) {
  const dc = new DebugClient('unused', 'unused', 'python');
  dc.defaultTimeout = TIMEOUT;
  const port = configuration.connect ? configuration.connect.port : Number(env.PORT);
  await dc.start(port);
  sessions.push(dc);
  const dispatch = dc.dispatch.bind(dc);
  dc.dispatch = (body) => {
    const message = JSON.parse(body);
    if (message.type !== 'request') return dispatch(body);
    assert.strictEqual(message.command, 'startDebugging', body);
    dc.outputStream.write(frame({ seq: 0, type: 'response', request_seq: message.seq,
      command: message.command, success: true }));
    const child = message.arguments.configuration;
    session(child, child.name).catch(fail);
  };
  dc.on('stopped', () => {
    if (name === 'job' || stoppedSessions.has(dc)) return;
    stoppedSessions.add(dc);
    if (stoppedSessions.size === WORKERS) allStopped(performance.timeOrigin + performance.now());
  });
  await dc.initializeRequest({ adapterID: debugpy ? 'debugpy' : 'python', clientID: 'vscode',
    linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path',
    supportsStartDebuggingRequest: true });
  const initialized = dc.waitForEvent('initialized', TIMEOUT);
  // debugpy answers the attach only after configurationDone, as VS Code lets it.
  const attached = dc.attachRequest(configuration);
  await initialized;
  await dc.setBreakpointsRequest({ source: { path: env.PROGRAM }, breakpoints: [{ line: LINE }] });
  await dc.configurationDoneRequest();
  await attached;
}

function fail(error) {
  process.stderr.write(`many_stops.js: ${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
}

async function main() {
  const job = debugpy
    ? { request: 'attach', connect: { host: '127.0.0.1', port: Number(env.PORT) },
      justMyCode: false, subProcess: true }
    : { request: 'attach' };
  await session(job, 'job');
  const timer = setTimeout(() => fail(new Error(
    `${stoppedSessions.size} of ${WORKERS} processes stopped within ${TIMEOUT} ms`)), TIMEOUT);
  const lastStopEpochMs = await everyWorkerStopped;
  clearTimeout(timer);
  process.stdout.write(JSON.stringify({ lastStopEpochMs, sessions: sessions.length }) + '\n');
}

main().then(() => process.exit(0), fail);
