'use strict';
// Requests per second and latency of the service's single-ID endpoint
// beside a constant-answer endpoint of the same framework (trivial.js),
// both driven by an external load generator (autocannon, a devDependency)
// with the same connections, pipelining and duration, in alternating runs.
// A benchmark that prints numbers, not a test.
//
// usage: node bench/bench.js CONFIG [--seconds 10] [--connections 32]
//          [--pipelining 1] [--rounds 4] [--warmup 5] [--batch N]
//   CONFIG: a service configuration file whose namespace 1 exists; the
//   service is started on its listen.port, the trivial server on the next.
//   --batch N adds one run per round of gen/batch/ with N IDs (not part of
//   the ratio).
// bench/run.sh sets up a throwaway PostgreSQL with idgen and calls this.
//
// autocannon runs in this process: on a small machine it competes with the
// service for the same cores, as it does with the trivial endpoint, so the
// ratio is the figure to read; the rates are the machine's.
const http = require('http');
const path = require('path');
const fs = require('fs');
const os = require('os');
const { spawn } = require('child_process');
const autocannon = require('autocannon');

const args = process.argv.slice(2);
const config = args.find((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : dflt;
  if (!Number.isInteger(v) || v < 0) {
    console.error(`--${name} must be a non-negative integer`);
    process.exit(2);
  }
  return v;
};
if (!config) {
  console.error('usage: node bench/bench.js CONFIG [--seconds 10] [--connections 32] [--pipelining 1] '
    + '[--rounds 4] [--warmup 5] [--batch N]');
  process.exit(2);
}
const seconds = opt('seconds', 10);
const connections = opt('connections', 32);
const pipelining = opt('pipelining', 1);
const rounds = opt('rounds', 4);
const warmup = opt('warmup', 5);
const batch = opt('batch', 0);
const port = JSON.parse(fs.readFileSync(config, 'utf8')).listen.port;
const children = [];

function start(script, args_) {
  const child = spawn(process.execPath, [script, ...args_], { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}

function request(p, path_, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: p, path: path_, method: body ? 'POST' : 'GET', agent: false,
      headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} },
    (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function waitFor(p, path_, body) {
  for (let i = 0; i < 300; i++) {
    try {
      const r = await request(p, path_, body);
      if (r.status === 200)
        return r;
    } catch (e) { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing ready on port ${p}${path_}`);
}

// CPU time a process has used, in seconds (Linux /proc; null elsewhere):
// on a machine shared with other work, CPU per request is steadier than
// requests per second
function cpuSeconds(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;   // utime + stime, in USER_HZ ticks
  } catch (e) {
    return null;
  }
}

async function cannon(p, path_, body, duration, pid) {
  const c0 = cpuSeconds(pid);
  const r = await autocannon({
    url: `http://127.0.0.1:${p}${path_}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    pipelining,
    duration,
  });
  const c1 = cpuSeconds(pid);
  r.cpuUs = c0 === null || c1 === null || r.requests.total === 0 ? null : (c1 - c0) * 1e6 / r.requests.total;
  return r;
}

const one = JSON.stringify({ namespace: 1 });
const targets = {
  trivial: { port: port + 1, path: '/api/snowflake/v1/gen/', body: one, runs: [] },
  service: { port, path: '/api/snowflake/v1/gen/', body: one, runs: [] },
};
const batchRuns = [];

function row(label, round, r) {
  const bad = r.non2xx + r.errors + r.timeouts;
  console.log([label.padEnd(22), String(round).padStart(5), r.requests.average.toFixed(0).padStart(9),
    String(r.latency.p50).padStart(6), String(r.latency.p99).padStart(6), String(r.latency.p99_9).padStart(8),
    (r.cpuUs === null ? '-' : r.cpuUs.toFixed(1)).padStart(7), String(bad).padStart(6)].join(' '));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

(async () => {
  targets.service.pid = start(path.join(__dirname, '..', 'server.js'), [config]).pid;
  targets.trivial.pid = start(path.join(__dirname, 'trivial.js'), [String(port + 1)]).pid;
  await waitFor(port, '/ready');
  const a = await waitFor(port, '/api/snowflake/v1/gen/', one);
  const b = await waitFor(port + 1, '/api/snowflake/v1/gen/', one);
  console.log(`service answers: ${a.text}`);
  console.log(`trivial answers: ${b.text}`);
  console.log(`${new Date().toISOString()}  node ${process.version}  autocannon ${require('autocannon/package.json').version}`
    + `  ${os.cpus().length} x ${os.cpus()[0].model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`
    + `  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`${connections} connections, pipelining ${pipelining}, ${seconds} s per run after ${warmup} s of warm-up `
    + `per target, ${rounds} rounds, alternating (odd rounds trivial first, even rounds service first)`);
  if (warmup > 0)
    for (const t of Object.values(targets))
      await cannon(t.port, t.path, t.body, warmup, t.pid);
  console.log(['endpoint'.padEnd(22), 'round'.padStart(5), 'req/s'.padStart(9), 'p50ms'.padStart(6),
    'p99ms'.padStart(6), 'p99.9ms'.padStart(8), 'cpu us'.padStart(7), 'failed'.padStart(6)].join(' '));
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 ? ['trivial', 'service'] : ['service', 'trivial'];
    for (const name of order) {
      const t = targets[name];
      const r = await cannon(t.port, t.path, t.body, seconds, t.pid);
      t.runs.push(r);
      row(name === 'trivial' ? 'trivial (constant)' : 'service gen/, one ID', round, r);
    }
    if (batch > 0) {
      const r = await cannon(port, '/api/snowflake/v1/gen/batch/', JSON.stringify({ namespace: 1, count: batch }), seconds,
        targets.service.pid);
      batchRuns.push(r);
      row(`service gen/batch/ ${batch}`, round, r);
    }
  }
  const ratios = targets.service.runs.map((r, i) => r.requests.average / targets.trivial.runs[i].requests.average);
  const total = (t) => t.runs.reduce((s, r) => s + r.requests.total, 0);
  console.log(`ratio service/trivial per round: ${ratios.map((x) => x.toFixed(3)).join(' ')}`);
  console.log(`ratio service/trivial, median of rounds: ${median(ratios).toFixed(3)}, `
    + `over all requests: ${(total(targets.service) / total(targets.trivial)).toFixed(3)}`);
  for (const name of ['trivial', 'service']) {
    const runs = targets[name].runs;
    const m = (f) => median(runs.map(f));
    console.log(`${name}: median of rounds ${m((r) => r.requests.average).toFixed(0)} req/s, `
      + `p50 ${m((r) => r.latency.p50)} ms, p99 ${m((r) => r.latency.p99)} ms, p99.9 ${m((r) => r.latency.p99_9)} ms`
      + (runs.every((r) => r.cpuUs !== null) ? `, ${m((r) => r.cpuUs).toFixed(1)} us of its process's CPU per request` : ''));
  }
  const cpu = (t) => median(t.runs.map((r) => r.cpuUs));
  if ([...targets.trivial.runs, ...targets.service.runs].every((r) => r.cpuUs !== null))
    console.log(`CPU per request, trivial/service (medians; the steadier figure on a shared machine): `
      + `${(cpu(targets.trivial) / cpu(targets.service)).toFixed(3)}`);
  const failed = [...targets.trivial.runs, ...targets.service.runs, ...batchRuns]
    .reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0);
  if (failed > 0) {
    console.log(`${failed} requests failed (non-2xx, errors or timeouts): the figures above are not valid`);
    process.exitCode = 1;
  }
})().catch((e) => {
  console.error(e.stack || e);
  process.exitCode = 1;
}).finally(() => {
  for (const c of children)
    c.kill('SIGTERM');
});
