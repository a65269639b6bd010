// Benchmark harness (plain JS over the compiled dist/, so nothing is compiled while
// measuring) for the quick PGlite scenarios of bench/run.mjs. The PostgreSQL benchmarks
// (token exchange, client_credentials, JWKS, later impersonation) are *.measure.ts files
// loading with autocannon through bench/load.ts.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Starts the compiled broker (both servers) as its own process, as `npm start` runs it,
 * on ephemeral ports with a fresh embedded database, so the load generator in this
 * process does not share the broker's event loop. Resolves with the servers' URLs.
 */
export async function startBroker(extraConfig = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'broker-bench-'));
  const key = () => randomBytes(32).toString('base64');
  const config = {
    server: { enduser: { port: 0 }, admin: { port: 0 } },
    storage: { pglite: { data_dir: join(dir, 'pglite') } },
    encryption: { keys: [{ id: 'bench', key: key() }] },
    third_party_oauth2: { jwe_keys: [{ id: 'bench', key: key() }] },
    log: { level: 'info' },
    ...extraConfig,
  };
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, ['dist/apps/broker/src/main.js', '--config', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const urls = {};
  await new Promise((resolve, reject) => {
    let pending = '';
    child.once('exit', (code) => reject(new Error(`broker exited with ${code}`)));
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) {
        const record = JSON.parse(line);
        if (typeof record.url === 'string' && String(record.msg).endsWith('server listening'))
          urls[record.server] = record.url;
      }
      if (urls.enduser && urls.admin) resolve();
    });
  });
  child.stdout.resume();
  return {
    urls,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

function once(agent, url, options) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(url, { agent, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    req.on('error', reject);
    if (options.body) req.write(options.body);
    req.end();
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * Sends `requests` requests with `concurrency` in flight over keep-alive connections,
 * after a warm-up; returns throughput and latency percentiles (ms).
 */
export async function runScenario(
  name,
  url,
  { requests = 20_000, concurrency = 32, warmup = 1_000, expectStatus = 200, ...options } = {},
) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  const latencies = [];
  const worker = async (count, record) => {
    while (next < count) {
      next += 1;
      const { status, ms } = await once(agent, url, options);
      if (status !== expectStatus) throw new Error(`${name}: expected ${expectStatus}, got ${status}`);
      if (record) latencies.push(ms);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker(warmup, false)));
  next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, () => worker(requests, true)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    scenario: name,
    requests,
    concurrency,
    'req/s': Math.round(requests / seconds),
    'p50 ms': percentile(latencies, 50).toFixed(2),
    'p95 ms': percentile(latencies, 95).toFixed(2),
    'p99 ms': percentile(latencies, 99).toFixed(2),
    'max ms': latencies[latencies.length - 1].toFixed(2),
  };
}
