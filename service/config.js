'use strict';
// Configuration: a JSON file (IDGEN_SERVICE_CONFIG or the first argument),
// then the environment over it.  The database connection also takes the
// libpq variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD) that the
// pg driver reads itself.

const fs = require('fs');

const DEFAULTS = {
  listen: { host: '127.0.0.1', port: 8080 },
  database: {},                      // pg Pool options; empty: PG* variables
  pool_size: 4,
  query_timeout_ms: 5000,
  connect_timeout_ms: 2000,
  buffer: { size: 1000, refill_below: 500, chunk: 500 },
  max_batch: 1000,
  log_level: 'info',
  log_requests: false,
  namespaces: {},
};

function fail(msg) {
  const e = new Error(msg);
  e.configError = true;
  throw e;
}

function positiveInt(v, what) {
  if (!Number.isInteger(v) || v < 1)
    fail(`${what} must be a positive integer, not ${JSON.stringify(v)}`);
  return v;
}

function load(argv = process.argv, env = process.env) {
  const file = env.IDGEN_SERVICE_CONFIG || argv[2];
  let raw = {};
  if (file) {
    try {
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      fail(`cannot read configuration file ${file}: ${e.message}`);
    }
  }
  const c = { ...DEFAULTS, ...raw };
  c.listen = { ...DEFAULTS.listen, ...(raw.listen || {}) };
  c.buffer = { ...DEFAULTS.buffer, ...(raw.buffer || {}) };
  c.database = { ...(raw.database || {}) };

  if (env.IDGEN_SERVICE_HOST)
    c.listen.host = env.IDGEN_SERVICE_HOST;
  if (env.IDGEN_SERVICE_PORT)
    c.listen.port = Number(env.IDGEN_SERVICE_PORT);
  if (env.IDGEN_SERVICE_DATABASE_URL)
    c.database = { connectionString: env.IDGEN_SERVICE_DATABASE_URL };
  if (env.IDGEN_SERVICE_LOG_LEVEL)
    c.log_level = env.IDGEN_SERVICE_LOG_LEVEL;

  if (!Number.isInteger(c.listen.port) || c.listen.port < 0 || c.listen.port > 65535)
    fail(`listen.port must be a port number, not ${JSON.stringify(c.listen.port)}`);
  positiveInt(c.pool_size, 'pool_size');
  positiveInt(c.query_timeout_ms, 'query_timeout_ms');
  positiveInt(c.connect_timeout_ms, 'connect_timeout_ms');
  positiveInt(c.max_batch, 'max_batch');
  if (c.max_batch > 100000)
    fail('max_batch must be at most 100000 (the most idgen_next_batch() gives at once)');
  positiveInt(c.buffer.size, 'buffer.size');
  positiveInt(c.buffer.chunk, 'buffer.chunk');
  if (c.buffer.chunk > 100000)
    fail('buffer.chunk must be at most 100000');
  if (!Number.isInteger(c.buffer.refill_below) || c.buffer.refill_below < 0
      || c.buffer.refill_below > c.buffer.size)
    fail('buffer.refill_below must be an integer from 0 to buffer.size');

  // "namespaces": { "1": "legacy", "2": { "generator": "orders", "datacenter_field": "dc" } }
  const namespaces = new Map();
  for (const [key, v] of Object.entries(c.namespaces || {})) {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(key))
      fail(`namespace ${JSON.stringify(key)} is not a non-negative integer`);
    const ns = typeof v === 'string' ? { generator: v } : { ...v };
    if (typeof ns.generator !== 'string' || ns.generator === '')
      fail(`namespace ${key} needs a "generator": the name of an idgen named generator`);
    ns.datacenter_field = ns.datacenter_field || 'datacenter';
    namespaces.set(Number(key), ns);
  }
  if (namespaces.size === 0)
    fail('no namespaces configured: map at least one namespace to a named generator');
  c.namespaces = namespaces;
  return c;
}

module.exports = { load };
