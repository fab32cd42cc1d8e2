// What the scenarios of tests/dap share: a DebugClient (Microsoft's DAP test client) on
// `dpdb dap`, and what they ask of it. The environment says where things are (see drive.js).
'use strict';
const assert = require('assert');
const net = require('net');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const env = process.env;
const TIMEOUT = 30000;

function named(variables, name) {
  const found = variables.find((v) => v.name === name);
  assert.ok(found, `no variable ${name} among ${variables.map((v) => v.name)}`);
  return found;
}

// The next 'stopped' event; a timeout says which stop did not come.
function stoppedFor(dc, what) {
  return dc.waitForEvent('stopped', TIMEOUT).catch((error) => {
    throw new Error(`${what}: ${error.message}`);
  });
}

async function topFrame(dc, threadId) {
  const trace = await dc.stackTraceRequest({ threadId });
  return trace.body.stackFrames;
}

// One IDE session: DebugClient on `dpdb dap` (stdio, or the --listen port in PORT, on HOST),
// initialized (with `initArguments` besides the usual) and attached. `beforeAttach(dc, init)`
// looks at what comes before the attach.
async function connect(attachArguments = {}, beforeAttach = async () => {}, initArguments = {}) {
  const dc = new DebugClient(env.DPDB, 'dap', 'python', { env }, true);
  dc.defaultTimeout = TIMEOUT;
  if (env.PORT && env.HOST) {
    // DebugClient's own start(port) dials 127.0.0.1 only.
    const socket = net.createConnection(Number(env.PORT), env.HOST);
    await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
    dc.connect(socket, socket);
  } else {
    await (env.PORT ? dc.start(Number(env.PORT)) : dc.start());
  }
  const init = await dc.initializeRequest({
    adapterID: 'python', clientID: 'dpdb-tests', linesStartAt1: true, columnsStartAt1: true,
    pathFormat: 'path', ...initArguments,
  });
  await beforeAttach(dc, init);
  const initialized = dc.waitForEvent('initialized', TIMEOUT);
  const processEvent = dc.waitForEvent('process', TIMEOUT);
  await dc.attachRequest(attachArguments);
  await initialized;
  assert.strictEqual((await processEvent).body.startMethod, 'attach');
  return dc;
}

function pidOf(name) {
  return Number(/^pid (\d+) /.exec(name)[1]);
}

module.exports = { TIMEOUT, named, stoppedFor, topFrame, connect, pidOf };
