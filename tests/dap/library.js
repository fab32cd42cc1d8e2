// justMyCode and stepping (tests/e2e/programs/dap_library.py): stepIn on a line that calls into
// the standard library does not stop in it with justMyCode on (the attach's default, as debugpy):
// the thread lands on the next line of the user's code; with "justMyCode": false it stops in
// json's own code, as pdb's `step` does.
// Environment: DPDB, DPDB_HUB, PROGRAM (dap_library.py), LINE_CALL, LINE_AFTER, JUST_MY_CODE.
// Prints one JSON line of what it saw; exits non-zero, saying why, on any failed expectation.
'use strict';
const assert = require('assert');

const { TIMEOUT, stoppedFor, topFrame, connect } = require('./client');

const env = process.env;
const LINE_CALL = Number(env.LINE_CALL);
const LINE_AFTER = Number(env.LINE_AFTER);
const JUST_MY_CODE = env.JUST_MY_CODE !== 'off';

async function main() {
  const dc = await connect({ name: 'dpdb', type: 'python', request: 'attach', ...(JUST_MY_CODE ? {} : { justMyCode: false }) });
  await dc.setBreakpointsRequest({ source: { path: env.PROGRAM }, breakpoints: [{ line: LINE_CALL }] });
  const ended = dc.waitForEvent('terminated', 4 * TIMEOUT);
  const first = stoppedFor(dc, 'the breakpoint at the call into json');
  await dc.configurationDoneRequest();
  process.stdout.write('attached\n');  // test_dap.py starts the job now

  const threadId = (await first).body.threadId;
  assert.strictEqual((await topFrame(dc, threadId))[0].line, LINE_CALL);
  const stepped = stoppedFor(dc, 'the stepIn');
  await dc.stepInRequest({ threadId });
  assert.strictEqual((await stepped).body.reason, 'step');
  const landed = (await topFrame(dc, threadId))[0];
  if (JUST_MY_CODE) {
    assert.strictEqual(landed.source.path, env.PROGRAM, JSON.stringify(landed));
    assert.strictEqual(landed.line, LINE_AFTER, JSON.stringify(landed));
  } else {
    assert.match(landed.source.path, /\/json\/__init__\.py$/, JSON.stringify(landed));
    assert.strictEqual(landed.name, 'dumps');
  }
  await dc.continueRequest({ threadId });
  await ended;
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify({ landed: [landed.source.path, landed.line, landed.name] }) + '\n');
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
