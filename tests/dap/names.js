// `dpdb dap`'s thread names follow the processes' own (tests/e2e/programs/dap_rename.py): a child
// listed under the name it started with is listed under its new one once it renamed itself (DAP
// has no event for a rename: the next threads response says it).
// Environment: DPDB, DPDB_HUB, DPDB_WORKDIR (where the job reads its "rename" and "end" files).
// Prints one JSON line of what it saw; exits non-zero, saying why, on any failed expectation.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');

const { TIMEOUT, connect, pidOf } = require('./client');

const env = process.env;

// The next output event whose text matches `pattern`.
function printed(dc, pattern) {
  return new Promise((resolve, reject) => {
    const late = setTimeout(() => reject(new Error(`no output ${pattern} within ${TIMEOUT} ms`)), TIMEOUT);
    dc.on('output', (event) => {
      if (event.body.category === 'stdout' && pattern.test(event.body.output)) {
        clearTimeout(late);
        resolve(event.body.output);
      }
    });
  });
}

async function childThread(dc) {
  const threads = (await dc.threadsRequest()).body.threads;
  return threads.find((thread) => / (first-name|renamed-worker)$/.test(thread.name));
}

async function main() {
  const dc = await connect({ name: 'dpdb', type: 'python', request: 'attach' });
  const renamed = printed(dc, /dap_rename child renamed/);
  const ended = dc.waitForEvent('terminated', 4 * TIMEOUT);
  await dc.configurationDoneRequest();
  process.stdout.write('attached\n');  // test_dap.py starts the job now

  // Listed from the moment it connected (its first line of output may come before its link).
  let before = await childThread(dc);
  for (let asked = 0; asked < 300 && !before; asked += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    before = await childThread(dc);
  }
  assert.ok(before, JSON.stringify((await dc.threadsRequest()).body.threads));
  assert.match(before.name, /^pid \d+ first-name$/);
  fs.writeFileSync(path.join(env.DPDB_WORKDIR, 'rename'), '');
  await renamed;
  // The process tells the hub within a second of its rename (python/dpdb/_identity.refresh).
  let after = before;
  for (let asked = 0; asked < 200 && / first-name$/.test(after.name); asked += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    after = await childThread(dc);
  }
  assert.strictEqual(after.id, before.id);
  assert.strictEqual(after.name, `pid ${pidOf(before.name)} renamed-worker`);
  fs.writeFileSync(path.join(env.DPDB_WORKDIR, 'end'), '');
  await ended;
  await dc.disconnectRequest({});
  process.stdout.write(JSON.stringify({ before: before.name, after: after.name }) + '\n');
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
