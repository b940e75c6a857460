'use strict';
// The prefetch buffer on its own, with a fake database: node test/buffer.test.js
// Prints one "ok - ..." line per check; exits 1 at the first failure.
const assert = require('assert');
const { IdBuffer } = require('../buffer');

let next = 1n;
let datacenter = 1;
let down = false;
let fetches = 0;
async function fetchChunk(n) {
  fetches++;
  if (down)
    throw new Error('connect ECONNREFUSED');
  const ids = [];
  for (let i = 0; i < n; i++)
    ids.push(String(next++));
  return { ids, datacenter };
}
const issued = () => Number(next - 1n);
function check(what, fn) {
  fn();
  console.log(`ok - ${what}`);
}

(async () => {
  const b = new IdBuffer(fetchChunk, { size: 10, refillBelow: 5, chunk: 4, retryMs: 5, maxRetryMs: 20 });
  await b.refill(true);
  check('a forced refill fills the buffer to its size, a chunk at a time', () => {
    assert.strictEqual(b.available, 10);
    assert.strictEqual(fetches, 3);
  });

  // the datacenter changes (the server restarted with another node id)
  datacenter = 2;
  const first = b.take(6);
  await b.refilling;
  check('a take below the mark refills', () => {
    assert.deepStrictEqual(first.ids, ['1', '2', '3', '4', '5', '6']);
    assert.strictEqual(b.available, 8);
  });
  check('a take never mixes datacenters', () => {
    assert.strictEqual(b.take(8), null);
    const t = b.take(4);
    assert.strictEqual(t.datacenter, 1);
    assert.deepStrictEqual(t.ids, ['7', '8', '9', '10']);
  });

  // a forced refill of a full buffer has nothing to fetch; the buffer must
  // still refill afterwards (it once kept that finished refill for good)
  await b.refilling;
  await b.refill(true);
  assert.strictEqual(b.available, 10);
  await b.refill(true);
  const before = fetches;
  while (b.take(1))
    ;
  await b.refilling;
  check('a refill that had nothing to fetch does not stop later refills', () => {
    assert.ok(fetches > before);
    assert.ok(b.available > 0);
  });

  // the database goes away
  down = true;
  const served = [];
  let t;
  while ((t = b.take(1)))
    served.push(...t.ids);
  const failed = await b.takeWaiting(1);
  check('with the database down: only fetched IDs, then nothing, with the reason', () => {
    assert.strictEqual(failed, null);
    assert.match(b.lastError.message, /ECONNREFUSED/);
    assert.ok(served.every((id) => BigInt(id) <= BigInt(issued())));
    assert.strictEqual(b.available, 0);
  });

  down = false;
  const back = await b.takeWaiting(3);
  check('the database back: a request refills at once and gets IDs', () => {
    assert.strictEqual(back.ids.length, 3);
    assert.strictEqual(b.lastError, null);
  });
  b.close();

  // order: requests in line are served first come first served, a batch
  // larger than the buffer after the IDs already held, so that every
  // answer is above the one before it
  const o = new IdBuffer(fetchChunk, { size: 10, refillBelow: 5, chunk: 4, retryMs: 5, maxRetryMs: 20 });
  await o.refill(true);
  const answers = [];
  const ask = (n) => o.takeWaiting(n).then((got) => { answers.push(got ? got.ids : null); });
  await Promise.all([ask(1), ask(25), ask(1), ask(10), ask(3), ask(1)]);
  await o.refilling;
  const flat = answers.flat();
  check('a batch larger than the buffer, and requests after it: answered in turn, each above the last', () => {
    assert.deepStrictEqual(answers.map((a) => a.length), [1, 25, 1, 10, 3, 1]);
    assert.ok(flat.every((id, i) => i === 0 || BigInt(id) > BigInt(flat[i - 1])));
  });

  // the oldest IDs are of another datacenter and too few for a request:
  // dropped (a gap), never mixed into its answer, and order kept
  datacenter = 3;
  const lastBefore = BigInt(flat[flat.length - 1]);
  const held = o.available;
  const mixed = await o.takeWaiting(held + 1);
  check('a request past a change of datacenter gets IDs of one datacenter, above all before', () => {
    assert.strictEqual(mixed.datacenter, 3);
    assert.strictEqual(mixed.ids.length, held + 1);
    assert.ok(BigInt(mixed.ids[0]) > lastBefore);
  });

  // takeOne(), the single-ID endpoint's path: the next ID off the front,
  // across chunks, never before a request in line, null when empty
  const ones = [];
  const one = o.takeOne();
  ones.push(one.id);
  const line = o.takeWaiting(o.available + 6);
  const overtaking = o.takeOne();
  const lined = await line;
  while (o.available > 0)
    ones.push(o.takeOne().id);
  await o.refilling;
  down = true;
  while (o.available > 0)
    ones.push(o.takeOne().id);
  const none = o.takeOne();
  down = false;
  check('takeOne: the next ID, in order, never before a request in line, null when empty', () => {
    assert.strictEqual(one.datacenter, 3);
    assert.ok(BigInt(one.id) > BigInt(mixed.ids[mixed.ids.length - 1]));
    assert.strictEqual(overtaking, null);
    assert.ok(BigInt(lined.ids[0]) > BigInt(one.id));
    const after = [one.id, ...lined.ids, ...ones.slice(1)];
    assert.ok(after.every((id, i) => i === 0 || BigInt(id) > BigInt(after[i - 1])));
    assert.strictEqual(none, null);
    assert.strictEqual(o.available, 0);
  });
  o.close();

  check('every ID was fetched once and handed out at most once', () => {
    const all = [...first.ids, ...served, ...back.ids, ...flat, ...mixed.ids, ...ones, ...lined.ids];
    assert.strictEqual(new Set(all).size, all.length);
  });
})().catch((e) => {
  console.log(`not ok - ${e.message}`);
  process.exit(1);
});
