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
    this.refilling = null;     // the running refill, a promise
    this.lastError = null;     // the last refill's error, cleared by a success
    this.failures = 0;
    this.retryTimer = null;
    this.closed = false;
  }

  // Take n IDs of one datacenter, or null if the buffer has fewer.
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
        while (!this.closed && this.available < this.size) {
          const n = Math.min(this.chunk, this.size - this.available);
          if (n < this.chunk && this.available >= this.refillBelow && !force)
            break;
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

  // For a request that found too few IDs: refill now (sharing a refill that
  // is already running, and not waiting out a retry's back-off), then try
  // again.  Null when the buffer still has too few (the database is
  // unreachable or refuses; lastError says why).
  async takeWaiting(n) {
    for (let round = 0; round < 3; round++) {
      const got = this.take(n);
      if (got || this.closed || (round > 0 && this.lastError))
        return got;
      if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = null;
      }
      await this.refill(true);
    }
    return this.take(n);
  }

  close() {
    this.closed = true;
    if (this.retryTimer)
      clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
}

module.exports = { IdBuffer };
