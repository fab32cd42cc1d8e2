// `dpdb dap`'s breakpoints are verified only where armed (tests/e2e/programs/dap_late_import.py):
// set before any process runs, they are unverified, saying so; a `breakpoint` event (reason
// "changed") makes each verified once a process arms it: at once where the file exists, and for
// a module written later, once the process imports it through a symlinked directory (the IDE
// names it by its real path). The process then stops at the line.
// Environment: DPDB, DPDB_HUB, DPDB_WORKDIR (where the job reads its "import" and "end" files),
// PLAIN and LINKED (the paths the IDE names) with LINE_PLAIN and LINE_LINKED.
// Prints one JSON line of what it saw; exits non-zero, saying why, on any failed expectation.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');

const { TIMEOUT, connect, stoppedFor, topFrame } = require('./client');

const env = process.env;

// The `breakpoint` events that make each of `ids` verified.
function verifiedByEvents(dc, ids) {
  const left = new Set(ids);
  const seen = [];
  return new Promise((resolve, reject) => {
    const late = setTimeout(() => reject(new Error(
      `no verified event for ${[...left]} within ${TIMEOUT} ms: ${JSON.stringify(seen)}`)), TIMEOUT);
    dc.on('breakpoint', (event) => {
      seen.push(event.body);
      const bp = event.body.breakpoint;
      if (event.body.reason === 'changed' && bp.verified && left.delete(bp.id) && left.size === 0) {
        clearTimeout(late);
        resolve(seen);
      }
    });
  });
}

async function set(dc, source, line) {
  const answer = await dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line }] });
  const [bp] = answer.body.breakpoints;
  assert.strictEqual(bp.verified, false, JSON.stringify(answer.body));
  assert.match(bp.message, /^pending: file not loaded in any process yet/, JSON.stringify(bp));
  assert.ok(bp.id > 0, JSON.stringify(bp));
  return bp;
}

async function main() {
  const dc = await connect({ name: 'dpdb', type: 'python', request: 'attach' });
  // No process yet: both pending.
  const plain = await set(dc, env.PLAIN, Number(env.LINE_PLAIN));
  const linked = await set(dc, env.LINKED, Number(env.LINE_LINKED));
  const verifiedPlain = verifiedByEvents(dc, [plain.id]);
  const verifiedLinked = verifiedByEvents(dc, [linked.id]);
  await dc.configurationDoneRequest();
  process.stdout.write('attached\n');  // test_dap.py starts the job now

  // The process arms the file it can read (bdb arms a file by its path, loaded or not) ...
  const plainEvents = await verifiedPlain;
  // ... and not the one that does not exist yet, until it imports it, through linkdir.
  const early = plainEvents.filter((e) => e.breakpoint.id === linked.id && e.breakpoint.verified);
  assert.deepStrictEqual(early, []);
  const stopped = stoppedFor(dc, 'the stop at plain()');
  fs.writeFileSync(env.LINKED, 'def linked(x):\n    return x + 1  # the linked line\n');
  fs.writeFileSync(path.join(env.DPDB_WORKDIR, 'import'), '');
  const linkedEvents = await verifiedLinked;
  const stop = (await stopped).body;
  assert.strictEqual(stop.reason, 'breakpoint');
  const frames = await topFrame(dc, stop.threadId);
  assert.strictEqual(frames[0].name, 'plain');
  // Every event since the set (each waiter saw them all): one per breakpoint.
  const events = linkedEvents.filter((e) => e.breakpoint.verified);
  for (const event of events) {
    assert.match(event.breakpoint.message, /^armed in 1 process$/, JSON.stringify(event));
  }

  // Out again; the job ends.
  await dc.setBreakpointsRequest({ source: { path: env.PLAIN }, breakpoints: [] });
  await dc.setBreakpointsRequest({ source: { path: env.LINKED }, breakpoints: [] });
  const ended = dc.waitForEvent('terminated', 4 * TIMEOUT);
  fs.writeFileSync(path.join(env.DPDB_WORKDIR, 'end'), '');
  await dc.continueRequest({ threadId: stop.threadId });
  await ended;
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify({ stoppedIn: frames[0].name,
    verified: events.map((e) => e.breakpoint.id), ids: [plain.id, linked.id] }) + '\n');
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
