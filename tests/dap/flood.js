// The copy of a job's output while the hub stops reading (tests/e2e/programs/dap_flood.py): the
// program is never held by it, and the IDE, once the hub reads again, gets what was kept, in
// order, and a line on stderr that says how much was not copied.
// Environment: DPDB, DPDB_HUB. Says "attached", then "copying" once the program's first line came
// (test_dap.py then stops the hub, lets the program print, and lets both go on); prints one JSON
// line of what it saw; exits non-zero, saying why, on any failed expectation.
'use strict';
const assert = require('assert');

const { TIMEOUT, connect } = require('./client');

async function main() {
  const dc = await connect({ name: 'dpdb', type: 'python', request: 'attach' });
  const lines = [];
  const notices = [];
  let ready;
  const copying = new Promise((resolve) => { ready = resolve; });
  dc.on('output', (event) => {
    const { category, output } = event.body;
    if (category === 'stdout' && output.startsWith('dap_flood ready')) ready();
    const line = /^dap_flood line (\d+) /.exec(output);
    if (category === 'stdout' && line) lines.push(Number(line[1]));
    if (category === 'stderr' && /^\[dpdb: /.test(output)) notices.push(output);
  });
  const ended = dc.waitForEvent('terminated', 4 * TIMEOUT);
  await dc.configurationDoneRequest();
  process.stdout.write('attached\n');  // test_dap.py starts the job now
  await copying;
  process.stdout.write('copying\n');
  await ended;
  await dc.disconnectRequest({});
  // What was kept comes in order, each line once, the first ones first.
  assert.ok(lines.length > 0);
  assert.deepStrictEqual(lines, [...Array(lines.length).keys()]);
  assert.ok(lines.length < 3000, `all ${lines.length} lines copied: the outbox never filled`);
  process.stdout.write(JSON.stringify({ lines: lines.length, notices }) + '\n');
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
