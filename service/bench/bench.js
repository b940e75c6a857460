'use strict';
// Requests per second and latency of the service on loopback, beside a
// trivial endpoint of the same framework measured in the same run.  A
// benchmark that prints numbers, not a test.
//
// usage: node bench/bench.js CONFIG [SECONDS] [CONNECTIONS] [BATCH]
//   CONFIG: a service configuration file whose namespace 1 exists (the
//   service is started on its listen.port, the trivial server on the next)
//
// The load generator is this process: on a small machine it competes with
// the service for the same cores, so read the figures side by side.
const http = require('http');
const path = require('path');
const fs = require('fs');
const { spawn } = require('child_process');

const [config, seconds = '10', connections = '32', batch = '100'] = process.argv.slice(2);
if (!config) {
  console.error('usage: node bench/bench.js CONFIG [SECONDS] [CONNECTIONS] [BATCH]');
  process.exit(2);
}
const port = JSON.parse(fs.readFileSync(config, 'utf8')).listen.port;
const children = [];

function start(args, label) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  child.label = label;
  children.push(child);
  return child;
}

function request(agent, p, path_, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: p, path: path_, method: body ? 'POST' : 'GET', agent,
      headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} },
    (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function waitFor(p, path_, body) {
  const agent = new http.Agent({ keepAlive: false });
  for (let i = 0; i < 200; i++) {
    try {
      if (await request(agent, p, path_, body) === 200)
        return;
    } catch (e) { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing ready on port ${p}${path_}`);
}

// `connections` clients in closed loops for `seconds`; latency per request
async function run(label, p, path_, body, idsPerRequest) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number(connections) });
  const lat = [];
  let failed = 0;
  // warm up for a second, then measure
  for (const measure of [false, true]) {
    const until = Date.now() + (measure ? Number(seconds) : 1) * 1000;
    const t0 = process.hrtime.bigint();
    let done = 0;
    await Promise.all([...Array(Number(connections)).keys()].map(async () => {
      while (Date.now() < until) {
        const s = process.hrtime.bigint();
        const status = await request(agent, p, path_, body);
        if (!measure)
          continue;
        lat.push(Number(process.hrtime.bigint() - s) / 1e6);
        done++;
        if (status !== 200)
          failed++;
      }
    }));
    if (measure) {
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      lat.sort((a, b) => a - b);
      const q = (f) => lat[Math.min(lat.length - 1, Math.floor(f * lat.length))].toFixed(2);
      console.log([label.padEnd(28), String(Math.round(done / secs)).padStart(8),
        String(Math.round(done * idsPerRequest / secs)).padStart(9),
        q(0.5).padStart(7), q(0.99).padStart(7), q(0.999).padStart(8), String(failed).padStart(7)].join(' '));
    }
  }
  agent.destroy();
}

(async () => {
  start([path.join(__dirname, '..', 'server.js'), config], 'service');
  start([path.join(__dirname, 'trivial.js'), String(port + 1)], 'trivial');
  await waitFor(port, '/ready');
  await waitFor(port + 1, '/api/snowflake/v1/gen/', JSON.stringify({ namespace: 1 }));
  console.log(`node ${process.version}, ${connections} connections, ${seconds} s each, batch ${batch}`);
  console.log(['endpoint'.padEnd(28), 'req/s'.padStart(8), 'IDs/s'.padStart(9),
    'p50 ms'.padStart(7), 'p99 ms'.padStart(7), 'p99.9 ms'.padStart(8), 'non-200'.padStart(7)].join(' '));
  const one = JSON.stringify({ namespace: 1 });
  await run('trivial (same framework)', port + 1, '/api/snowflake/v1/gen/', one, 0);
  await run('gen, one ID', port, '/api/snowflake/v1/gen/', one, 1);
  await run(`gen/batch, ${batch} IDs`, port, '/api/snowflake/v1/gen/batch/',
    JSON.stringify({ namespace: 1, count: Number(batch) }), Number(batch));
})().catch((e) => {
  console.error(e.stack || e);
  process.exitCode = 1;
}).finally(() => {
  for (const c of children)
    c.kill('SIGTERM');
});
