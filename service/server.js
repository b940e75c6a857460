'use strict';
// idgen's HTTP ID service: namespaces served from named generators.
//
// The service holds no ID state of its own.  Every ID it returns was issued
// by PostgreSQL (idgen_next_batch), either just now or ahead of time into a
// bounded per-namespace buffer; when the buffer is empty and the database
// cannot be reached, the answer is 503, never an ID made up here.  So any
// number of instances against one server, or against servers with distinct
// idgen.node_id, never hand out the same ID, and none needs an id of its own.

const fastify = require('fastify');
const { Pool } = require('pg');
const { IdBuffer } = require('./buffer');
const { load } = require('./config');

const ID_RE = /^-?[0-9]{1,20}$/;
const LONG_DIGITS_RE = /[0-9]{16}/;
const JSON_TYPE = 'application/json; charset=utf-8';
const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

// An error answered to the client: HTTP status, and a message that says why.
class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// A JSON body as JSON.parse reads it, except that an integer too large for
// a JavaScript number to hold exactly arrives as the string of its digits,
// so that an ID sent as the JSON number this service answers keeps every
// digit.  Only "id" accepts a string of digits: anywhere else the string
// is refused as the wrong type, as the number would have been.
function parseJson(text) {
  // An integer of at most 15 digits is exact as a JavaScript number: with
  // no run of 16 digits anywhere, JSON.parse alone reads the body exactly.
  if (!LONG_DIGITS_RE.test(text))
    return JSON.parse(text);
  let out = '';
  let from = 0;
  const re = /"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*/g;
  let m;
  while ((m = re.exec(text)) !== null) {
    const tok = m[0];
    if (tok[0] !== '"' && /^-?(0|[1-9][0-9]*)$/.test(tok) && !Number.isSafeInteger(Number(tok))) {
      out += text.slice(from, m.index) + `"${tok}"`;
      from = m.index + tok.length;
    }
  }
  return JSON.parse(from === 0 ? text : out + text.slice(from));
}

// JSON text of an answer whose IDs are given as strings of digits (as the
// database gave them): each ID is written as a JSON number of exactly those
// digits, which no JavaScript number could carry above 2^53, and as a
// string beside it.  ids: { key: [digits] or digits }.
function withIds(answer, ids) {
  let text = JSON.stringify(answer);
  for (const [key, v] of Object.entries(ids)) {
    const list = Array.isArray(v) ? v : [v];
    if (!list.every((id) => ID_RE.test(id)))
      throw new Error(`not an integer ID: ${list.find((id) => !ID_RE.test(id))}`);
    const numbers = Array.isArray(v) ? `[${list.join(',')}]` : v;
    text = text.replace(`"${key}":"@${key}@"`, `"${key}":${numbers}`);
  }
  return text;
}

// Strict input: a string, boolean, array or null is not a number, and a
// field the endpoint does not know is an error, not dropped in silence.
// (fastify's defaults coerce types and remove unknown fields.)
const STRICT_AJV = {
  customOptions: {
    coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, allowUnionTypes: true,
  },
};

// fastify gives every request a child logger bound to its request id; pino
// makes one by copying its bindings into a new object, a cost on every
// request although, without log_requests, nearly all never log.  This one
// is made only when the request logs: a request's lines carry its reqId as
// before.
const kChild = Symbol('child');
class LazyChildLogger {
  constructor(parent, bindings, opts) {
    this.parent = parent;
    this.bindings = bindings;
    this.opts = opts;
    this[kChild] = null;
  }

  get real() {
    if (this[kChild] === null)
      this[kChild] = this.parent.child(this.bindings, this.opts);
    return this[kChild];
  }

  get level() { return this.real.level; }

  set level(v) { this.real.level = v; }

  child(bindings, opts) { return this.real.child(bindings, opts); }
}
for (const m of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LazyChildLogger.prototype[m] = function log(...a) { return this.real[m](...a); };

function build(config) {
  const app = fastify({
    logger: { level: config.log_level },
    disableRequestLogging: !config.log_requests,
    bodyLimit: 64 * 1024,
    ajv: STRICT_AJV,
  });
  app.setChildLoggerFactory((logger, bindings, opts) => new LazyChildLogger(logger, bindings, opts));
  const log = app.log;

  // JSON bodies only: anything else is 415, as the docs' table says (fastify
  // would also read text/plain).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') {
      done(new HttpError(400, 'the request body is empty: send a JSON object'));
      return;
    }
    try {
      done(null, parseJson(body));
    } catch (e) {
      done(new HttpError(400, `the request body is not valid JSON: ${e.message}`));
    }
  });

  const pool = new Pool({
    ...config.database,
    max: config.pool_size,
    connectionTimeoutMillis: config.connect_timeout_ms,
    query_timeout: config.query_timeout_ms,
    application_name: 'idgen-service',
  });
  // A server that stops or restarts ends idle connections: the pool reports
  // it here (and drops them) instead of crashing the process.
  pool.on('error', (e) => log.warn({ err: e.message }, 'database connection lost'));

  const metrics = {
    requests: new Map(),      // "route status" -> { n: count }
    dbCalls: 0,
    dbErrors: 0,
    dbSeconds: 0,
  };

  async function query(text, values) {
    const t0 = process.hrtime.bigint();
    try {
      return await pool.query(text, values);
    } catch (e) {
      metrics.dbErrors++;
      throw e;
    } finally {
      metrics.dbCalls++;
      metrics.dbSeconds += Number(process.hrtime.bigint() - t0) / 1e9;
    }
  }

  // One namespace: its generator, its buffer.
  const namespaces = new Map();
  for (const [id, ns] of config.namespaces) {
    const fetchChunk = async (n) => {
      // All IDs of one batch carry the same node fields: decode the first.
      // The IDs come as one string, split here: pg's parser of a text[]
      // reads it a character at a time, 1.4 us per ID on the benchmark's
      // machine against 0.04 us for the split, a few per cent of what
      // serving one ID costs.
      const r = await query(
        'SELECT array_to_string(ids, \',\') AS ids, idgen_decode($1, ids[1]) AS fields '
        + 'FROM idgen_next_batch($1, $2) AS ids', [ns.generator, n]);
      const fields = r.rows[0].fields || {};
      const dc = fields[ns.datacenter_field];
      const text = r.rows[0].ids;
      return { ids: text ? text.split(',') : [], datacenter: Number.isInteger(dc) ? dc : null };
    };
    namespaces.set(id, {
      id,
      generator: ns.generator,
      datacenterField: ns.datacenter_field,
      served: 0,                // IDs served
      buffer: new IdBuffer(fetchChunk, {
        size: config.buffer.size,
        refillBelow: config.buffer.refill_below,
        chunk: config.buffer.chunk,
        onState: (e) => (e
          ? log.warn({ namespace: id, generator: ns.generator, err: e.message },
            'cannot refill the buffer: serving prefetched IDs while they last, retrying')
          : log.info({ namespace: id, generator: ns.generator }, 'refilling the buffer again')),
      }),
    });
  }

  function namespaceOf(body) {
    const ns = namespaces.get(body.namespace);
    if (!ns)
      throw new HttpError(404, `unknown namespace ${body.namespace}: this service serves namespaces `
        + [...namespaces.keys()].join(', '));
    return ns;
  }

  // Whether the database answered with an error of its own (a missing
  // generator, a missing grant), rather than being out of reach.
  function refused(err) {
    return !!(err && err.code && /^[0-9A-Z]{5}$/.test(err.code)
      && !/^(08|57P0)/.test(err.code));   // not a lost connection or a shutdown
  }

  // Why the database gave no IDs, for the client: the server's own message
  // when it answered, else that it could not be reached.
  function unavailable(ns, err) {
    const why = refused(err)
      ? `the database refused: ${err.message}`
      : `the database is unreachable${err ? ` (${err.message})` : ''}`;
    return new HttpError(503, `no IDs available for namespace ${ns.id} (generator ${ns.generator}): `
      + `no prefetched IDs are left and ${why}; no ID is ever made up without the database, retry later`);
  }

  // n IDs through the namespace's buffer, in line: each answer above the
  // one before it (buffer.js).
  async function takeIds(ns, n) {
    const got = await ns.buffer.takeWaiting(n);
    if (!got)
      throw unavailable(ns, ns.buffer.lastError);
    ns.served += got.ids.length;
    return got;
  }

  const namespaceSchema = { type: 'integer', minimum: 0, maximum: 9999999999 };
  // a body: a JSON object of exactly these fields
  const bodySchema = (properties, required) => ({
    type: 'object', required, properties, additionalProperties: false,
  });

  // What is wrong with a request body, naming the field, from ajv's error.
  function invalid(err) {
    const v = err.validation[0] || {};
    const field = (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.');
    const name = field ? `"${field}"` : 'the request body';
    switch (v.keyword) {
      case 'required':
        return `"${v.params.missingProperty}" is missing`;
      case 'additionalProperties':
        return `unknown field "${v.params.additionalProperty}"`;
      case 'type':
        if (field === 'id')
          return '"id" must be a 64-bit integer, as a JSON number or a string of digits';
        return field ? `${name} must be a JSON ${v.params.type} (strings, booleans, arrays and null are not converted)`
          : `${name} must be a JSON object`;
      default:
        return `${name} ${v.message}`;
    }
  }

  app.setErrorHandler((err, req, reply) => {
    let status = err.status || err.statusCode || 500;
    let message = err.message;
    if (err.validation) {
      status = 400;
      message = invalid(err);
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      status = 415;
      message = `the request body must be JSON, sent as content-type application/json, `
        + `not ${req.headers['content-type'] || 'without a content type'}`;
    }
    if (status >= 500 && !(err instanceof HttpError)) {
      log.error({ err }, 'request failed');
      message = 'internal error';
    }
    if (status === 503)
      log.warn({ url: req.url, why: message }, 'no IDs served');
    reply.code(status).send({ message, code: status, data: null });
  });
  // Requests by route and status, counted as each answer is finished (an
  // onResponse hook of each route) or, for an unknown path, as it is sent.
  // Each route's hook knows its path: one hook for all routes would have to
  // ask fastify for it (req.routeOptions, which builds and freezes an
  // object on every call), and an async hook costs a promise besides.
  // counter(route) -> count(status): the counters of one route
  const counter = (route) => {
    const byStatus = new Map();   // status -> { n }, as in metrics.requests
    return (status) => {
      let c = byStatus.get(status);
      if (c === undefined) {
        const key = `${route} ${status}`;
        c = metrics.requests.get(key);
        if (c === undefined) {
          c = { n: 0 };
          metrics.requests.set(key, c);
        }
        byStatus.set(status, c);
      }
      c.n++;
    };
  };
  app.addHook('onRoute', (route) => {
    const count = counter(route.url);
    const onResponse = (req, reply, done) => {
      count(reply.statusCode);
      done();
    };
    route.onResponse = route.onResponse ? [].concat(route.onResponse, onResponse) : onResponse;
  });
  const countNotFound = counter('unknown');
  app.setNotFoundHandler((req, reply) => {
    countNotFound(404);
    reply.code(404).send({ message: `no such endpoint: ${req.method} ${req.url}`, code: 404, data: null });
  });

  // The single-ID endpoint is the one that runs at the framework's speed:
  // a synchronous handler (no promise) when the buffer holds an ID and
  // nobody waits, the answer's text written directly, with the same bytes
  // withIds() would write.
  const oneId = (reply, id, datacenter) => {
    if (!ID_RE.test(id))
      throw new Error(`not an integer ID: ${id}`);
    reply.type(JSON_TYPE);
    return `{"message":"success","code":0,"data":{"snowflake_id":${id},"snowflake_id_str":"${id}",`
      + `"datacenter_id":${datacenter === null ? 'null' : datacenter}}}`;
  };
  app.post('/api/snowflake/v1/gen/', {
    schema: { body: bodySchema({ namespace: namespaceSchema }, ['namespace']) },
  }, (req, reply) => {
    const ns = namespaceOf(req.body);
    const got = ns.buffer.takeOne();
    if (got !== null) {
      ns.served++;
      return oneId(reply, got.id, got.datacenter);
    }
    return takeIds(ns, 1).then((g) => oneId(reply, g.ids[0], g.datacenter));
  });

  app.post('/api/snowflake/v1/gen/batch/', {
    schema: {
      body: bodySchema({
        namespace: namespaceSchema,
        count: { type: 'integer', minimum: 1, maximum: config.max_batch },
      }, ['namespace', 'count']),
    },
  }, async (req, reply) => {
    const ns = namespaceOf(req.body);
    const got = await takeIds(ns, req.body.count);
    reply.type('application/json; charset=utf-8');
    return withIds({
      message: 'success', code: 0,
      data: { snowflake_ids: '@snowflake_ids@', snowflake_ids_str: got.ids, datacenter_id: got.datacenter },
    }, { snowflake_ids: got.ids });
  });

  // The ID as a string of digits, or as a JSON number: parseJson() hands an
  // integer beyond 2^53 over as its exact digits.
  app.post('/api/snowflake/v1/decode/', {
    schema: {
      body: bodySchema({ namespace: namespaceSchema, id: { type: ['string', 'integer'] } }, ['namespace', 'id']),
    },
  }, async (req, reply) => {
    const ns = namespaceOf(req.body);
    const id = String(req.body.id);
    if (!ID_RE.test(id) || BigInt(id) > INT8_MAX || BigInt(id) < INT8_MIN)
      throw new HttpError(400, `"id" must be a 64-bit integer, as a JSON number or a string of digits: ${JSON.stringify(req.body.id)}`);
    let r;
    try {
      r = await query('SELECT idgen_decode($1, $2::bigint) AS fields', [ns.generator, id]);
    } catch (e) {
      if (e.code && /^22/.test(e.code))
        throw new HttpError(400, `cannot decode ${id} with generator ${ns.generator}: ${e.message}`);
      throw unavailable(ns, e);
    }
    const fields = r.rows[0].fields;
    const dc = fields[ns.datacenterField];
    const canonical = BigInt(id).toString();
    reply.type('application/json; charset=utf-8');
    return withIds({
      message: 'success', code: 0,
      data: {
        snowflake_id: '@snowflake_id@', snowflake_id_str: canonical,
        datacenter_id: Number.isInteger(dc) ? dc : null, fields,
      },
    }, { snowflake_id: canonical });
  });

  app.get('/health', async () => ({ status: 'ok' }));

  // Ready: the database answers, its idgen keeper is ready, and every
  // configured generator exists there and is active (not dropped, not
  // refused after a node id change), and gives this role IDs (the last
  // refill was not refused, by a missing grant say).  The role needs
  // SELECT on the view idgen_generator_status (docs/service.md); without
  // it the answer says so, rather than calling the database unreachable.
  app.get('/ready', async (req, reply) => {
    const names = [...namespaces.values()].map((ns) => ns.generator);
    let problems = [];
    try {
      const r = await query(
        'SELECT (SELECT keeper_state FROM idgen_status()) AS keeper, '
        + '(SELECT json_object_agg(name, json_build_object(\'state\', state, \'message\', message)) '
        + 'FROM idgen_generator_status WHERE name = ANY($1::text[])) AS found', [names]);
      if (r.rows[0].keeper !== 'ready')
        problems.push(`the idgen keeper is ${r.rows[0].keeper}, not ready`);
      const found = r.rows[0].found || {};
      for (const ns of namespaces.values()) {
        const g = found[ns.generator];
        if (!g)
          problems.push(`namespace ${ns.id}: generator ${ns.generator} does not exist (create it with idgen_create_generator)`);
        else if (g.state !== 'active')
          problems.push(`namespace ${ns.id}: generator ${ns.generator} is ${g.state}${g.message ? `: ${g.message}` : ''}`);
        else if (refused(ns.buffer.lastError))
          problems.push(`namespace ${ns.id}: the database refuses IDs of generator ${ns.generator}: ${ns.buffer.lastError.message}`);
      }
    } catch (e) {
      if (e.code === '42501')
        problems = [`the service's database role may not check readiness: ${e.message} `
          + '(grant it SELECT on idgen_generator_status, as the setup in docs/service.md does)'];
      else if (refused(e))
        problems = [`the database refused the readiness check: ${e.message}`];
      else
        problems = [`the database is unreachable: ${e.message}`];
    }
    const buffered = Object.fromEntries([...namespaces.values()].map((ns) => [ns.id, ns.buffer.available]));
    if (problems.length)
      return reply.code(503).send({ status: 'not ready', problems, buffered });
    return { status: 'ready', buffered };
  });

  app.get('/metrics', async (req, reply) => {
    const lines = [];
    lines.push('# HELP idgen_service_requests_total HTTP requests by route and status.');
    lines.push('# TYPE idgen_service_requests_total counter');
    for (const [key, { n }] of metrics.requests) {
      const [route, status] = key.split(' ');
      lines.push(`idgen_service_requests_total{route="${route}",status="${status}"} ${n}`);
    }
    lines.push('# HELP idgen_service_ids_served_total IDs returned to clients, by namespace.');
    lines.push('# TYPE idgen_service_ids_served_total counter');
    for (const ns of namespaces.values())
      lines.push(`idgen_service_ids_served_total{namespace="${ns.id}"} ${ns.served}`);
    lines.push('# HELP idgen_service_buffer_ids Prefetched IDs held, by namespace.');
    lines.push('# TYPE idgen_service_buffer_ids gauge');
    for (const ns of namespaces.values())
      lines.push(`idgen_service_buffer_ids{namespace="${ns.id}"} ${ns.buffer.available}`);
    lines.push('# HELP idgen_service_db_seconds Database round trips: time spent.');
    lines.push('# TYPE idgen_service_db_seconds summary');
    lines.push(`idgen_service_db_seconds_sum ${metrics.dbSeconds}`);
    lines.push(`idgen_service_db_seconds_count ${metrics.dbCalls}`);
    lines.push('# HELP idgen_service_db_errors_total Database round trips that failed.');
    lines.push('# TYPE idgen_service_db_errors_total counter');
    lines.push(`idgen_service_db_errors_total ${metrics.dbErrors}`);
    reply.type('text/plain; version=0.0.4').send(lines.join('\n') + '\n');
  });

  app.addHook('onClose', async () => {
    for (const ns of namespaces.values())
      ns.buffer.close();
    await pool.end();
  });

  // fill every buffer at start (failures retry in the background)
  app.fillBuffers = () => {
    for (const ns of namespaces.values())
      ns.buffer.refill();
  };
  return app;
}

async function main() {
  let config;
  try {
    config = load();
  } catch (e) {
    if (!e.configError)
      throw e;
    process.stderr.write(`idgen-service: ${e.message}\n`);
    process.exit(2);
  }
  const app = build(config);
  let closing = false;
  const shutdown = (signal) => {
    if (closing)
      return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing requests; prefetched IDs are dropped, never reused');
    app.close().then(() => process.exit(0), (e) => {
      app.log.error({ err: e }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.listen({ host: config.listen.host, port: config.listen.port });
  app.fillBuffers();
}

if (require.main === module)
  main().catch((e) => {
    process.stderr.write(`idgen-service: ${e.stack || e}\n`);
    process.exit(1);
  });

module.exports = { build, parseJson, withIds, STRICT_AJV };
