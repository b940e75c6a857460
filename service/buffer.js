'use strict';
// The prefetched IDs of one namespace.
//
// Every ID in here was issued by PostgreSQL (idgen_next_batch) before it was
// stored, so serving from the buffer while the database is unreachable can
// never produce an ID that PostgreSQL hands out again: the database moved
// past them when it issued them.  Nothing here makes up an ID.  Losing the
// buffer (a restart, a crash) only leaves a gap.
//
// The buffer is a queue of chunks, one per batch fetched.  All IDs of a chunk
// carry the same node fields (the server's idgen.node_id), decoded once from
// its first ID; a take() never mixes chunks whose datacenter differs, so a
// response's datacenter_id is true of every ID in it.
//
// Node runs this on one thread: take() is synchronous, so two requests can
// never receive the same buffered ID.
//
// Order: every ID a request gets comes off the front of this queue, and
// chunks are fetched one at a time (one refill runs at once) and appended in
// the order the database issued them, so each answer is above every answer
// before it.  A request the buffer cannot serve yet, a batch larger than the
// buffer included, waits in line: the refill fetches what it lacks behind the
// IDs already held, and requests are served in the order they came while any
// waits, so none is overtaken by a later one for ever.

// The most IDs idgen_next_batch() gives at once.
const MAX_FETCH = 100000;

class IdBuffer {
  // fetchChunk(n) resolves to { ids: [string], datacenter: number|null }
  // onState(error or null) is called when refilling starts failing and when
  // it succeeds again, not on every retry.
  constructor(fetchChunk, { size, refillBelow, chunk, retryMs = 250, maxRetryMs = 5000, onState = () => {} }) {
    this.fetchChunk = fetchChunk;
    this.onState = onState;
    this.size = size;
    this.refillBelow = refillBelow;
    this.chunk = chunk;
    this.retryMs = retryMs;
    this.maxRetryMs = maxRetryMs;
    this.chunks = [];          // { ids, pos, datacenter }
    this.available = 0;
    this.waiting = [];         // requests in line: { n, resolve }
    this.serving = false;      // serveWaiting() is running
    this.demand = 0;           // IDs the first request in line needs
    this.refilling = null;     // the running refill, a promise
    this.lastError = null;     // the last refill's error, cleared by a success
    this.failures = 0;
    this.retryTimer = null;
    this.closed = false;
  }

  // Take n IDs of one datacenter, or null if the buffer has fewer.  For a
  // request with nobody waiting before it: takeWaiting() keeps the line.
  take(n) {
    if (this.chunks.length === 0)
      return null;
    const datacenter = this.chunks[0].datacenter;
    let have = 0;
    for (const c of this.chunks) {
      if (c.datacenter !== datacenter)
        break;
      have += c.ids.length - c.pos;
      if (have >= n)
        break;
    }
    if (have < n)
      return null;
    const ids = [];
    while (ids.length < n) {
      const c = this.chunks[0];
      const k = Math.min(n - ids.length, c.ids.length - c.pos);
      for (let i = 0; i < k; i++)
        ids.push(c.ids[c.pos + i]);
      c.pos += k;
      if (c.pos === c.ids.length)
        this.chunks.shift();
    }
    this.available -= n;
    this.maybeRefill();
    return { ids, datacenter };
  }

  // take(1) for the single-ID endpoint, without the arrays: { id,
  // datacenter }, or null if a request is waiting (it goes first: then
  // takeWaiting()) or the buffer is empty.
  takeOne() {
    if (this.waiting.length !== 0)
      return null;
    const c = this.chunks[0];
    if (c === undefined || c.pos >= c.ids.length) {
      const got = this.take(1);
      return got && { id: got.ids[0], datacenter: got.datacenter };
    }
    const id = c.ids[c.pos++];
    if (c.pos === c.ids.length)
      this.chunks.shift();
    this.available--;
    this.maybeRefill();
    return { id, datacenter: c.datacenter };
  }

  // Start a refill if the level is below the mark and none is running.
  maybeRefill() {
    if (!this.closed && !this.refilling && !this.retryTimer && this.available < this.refillBelow)
      this.refill();
  }

  // Fetch chunks until the buffer holds `size` IDs, or, unless forced, until
  // only a top-up smaller than a chunk is missing above the refill mark (no
  // round trips for a handful of IDs).  Resolves when done or when a fetch
  // failed (then a retry is scheduled, backing off to maxRetryMs).  Never
  // rejects.
  refill(force = false) {
    if (this.refilling)
      return this.refilling;
    // The clearing runs in .finally(), always after this assignment: a
    // refill with nothing to fetch finishes without awaiting, and clearing
    // inside it would come before the assignment and leave it set for good.
    this.refilling = (async () => {
      try {
        while (!this.closed && this.available < Math.max(this.size, this.demand)) {
          // a chunk (or what fills the buffer), or more if a request in
          // line needs more
          let n = Math.max(Math.min(this.chunk, this.size - this.available),
            this.demand - this.available);
          if (n < this.chunk && this.available >= this.refillBelow && this.available >= this.demand && !force)
            break;
          n = Math.min(n, MAX_FETCH);
          const got = await this.fetchChunk(n);
          if (this.closed)
            break;
          this.chunks.push({ ids: got.ids, pos: 0, datacenter: got.datacenter });
          this.available += got.ids.length;
          if (this.failures > 0)
            this.onState(null);
          this.lastError = null;
          this.failures = 0;
        }
      } catch (e) {
        this.lastError = e;
        if (this.failures++ === 0)
          this.onState(e);
        if (!this.closed) {
          const wait = Math.min(this.maxRetryMs, this.retryMs * 2 ** Math.min(this.failures - 1, 10));
          this.retryTimer = setTimeout(() => {
            this.retryTimer = null;
            this.maybeRefill();
          }, wait);
          this.retryTimer.unref();
        }
      }
    })().finally(() => {
      this.refilling = null;
    });
    return this.refilling;
  }

  // Take n IDs for a request, in line behind any request still waiting: at
  // once when the buffer holds them, else after a refill that fetches what
  // is missing (now, not after a retry's back-off).  Null when the refill
  // failed (the database is unreachable or refuses; lastError says why).
  takeWaiting(n) {
    if (this.waiting.length === 0) {
      const got = this.take(n);
      if (got || this.closed)
        return Promise.resolve(got);
    }
    return new Promise((resolve) => {
      this.waiting.push({ n, resolve });
      this.serveWaiting();
    });
  }

  // Serve the requests in line, first come first served, refilling for the
  // first until it can be served or a refill fails; a failure answers every
  // request in line that the buffer cannot serve with null.
  async serveWaiting() {
    if (this.serving)
      return;
    this.serving = true;
    try {
      while (this.waiting.length > 0) {
        const w = this.waiting[0];
        const got = this.take(w.n);
        if (got) {
          this.waiting.shift();
          w.resolve(got);
          continue;
        }
        if (this.closed) {
          this.failWaiting();
          break;
        }
        if (this.available >= w.n)
          // enough IDs, but the oldest are of another datacenter (the server
          // changed its node id) and too few for this request: drop them, a
          // gap, so that no answer mixes datacenters
          this.dropFront();
        else {
          this.demand = w.n;
          if (this.retryTimer) {
            clearTimeout(this.retryTimer);
            this.retryTimer = null;
          }
          await this.refill(true);
          if (this.available < w.n && this.lastError)
            this.failWaiting();
        }
      }
    } finally {
      this.demand = 0;
      this.serving = false;
    }
  }

  // Answer every request in line: from the buffer where it can, else null.
  failWaiting() {
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting)
      w.resolve(this.closed ? null : this.take(w.n));
  }

  // Drop the IDs of the front chunks' datacenter.
  dropFront() {
    const datacenter = this.chunks[0].datacenter;
    while (this.chunks.length > 0 && this.chunks[0].datacenter === datacenter) {
      const c = this.chunks.shift();
      this.available -= c.ids.length - c.pos;
    }
  }

  close() {
    this.closed = true;
    this.failWaiting();
    if (this.retryTimer)
      clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
}

module.exports = { IdBuffer };
