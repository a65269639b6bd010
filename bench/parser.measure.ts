import { randomBytes } from 'node:crypto';
import { http, startTestBroker, type HttpResponse, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { BOTH_SERVERS } from '../test/support/servers';
import { repeatedNamesForm } from '../test/support/repeated-names-form';

const RUNS = 9;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * The parsers of untrusted input stay linear, measured. A 256 KiB form of
 * distinct short names each sent twice (about 30,000 names; a parser looking up every name
 * in a list of the names seen so far does half a billion comparisons on it: 700-1,000 ms per
 * request, and /health waited over ten seconds behind eight of them). Prints the server's own
 * latency (its log line) on both routes and /health's wait during a burst; asserts nothing
 * (test/http/parser-complexity.e2e-spec.ts checks the answers).
 */
describe('parsers of untrusted input', () => {
  let broker: TestBroker;
  const form = repeatedNamesForm();

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { log: { level: 'info' } } });
  });

  afterAll(async () => {
    await broker?.stop();
  });

  function sendForm(path: string, traceId = randomBytes(16).toString('hex')): Promise<HttpResponse> {
    return http(`${broker.url('enduser')}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: form,
    });
  }

  function serverLatencyMs(traceId: string): number {
    const line = broker.logs.lines.find((text) => text.includes(traceId) && text.includes('"latency_ms"'));
    return line === undefined ? Number.NaN : (JSON.parse(line) as { latency_ms: number }).latency_ms;
  }

  it('server latency of the 256 KiB repeated-names form, and /health during a burst of eight', async () => {
    const rows: Record<string, string | number>[] = [];
    for (const [route, path] of [
      ['hot route', '/oauth2/token'],
      ['ordinary route', '/oauth2/token?via=express'],
    ] as const) {
      await sendForm(path);
      const latencies: number[] = [];
      for (let run = 0; run < RUNS; run += 1) {
        const traceId = randomBytes(16).toString('hex');
        await sendForm(path, traceId);
        latencies.push(serverLatencyMs(traceId));
      }
      rows.push({
        scenario: `${(form.length / 1024).toFixed(0)} KiB form, ${route}`,
        runs: RUNS,
        'p50 ms': percentile(latencies, 50),
        'max ms': Math.max(...latencies),
      });
    }
    const waits: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const burst = Array.from({ length: 8 }, () => sendForm('/oauth2/token'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const started = performance.now();
      await http(`${broker.url('enduser')}/health`);
      waits.push(performance.now() - started);
      await Promise.all(burst);
    }
    rows.push({
      scenario: 'GET /health while eight such forms are parsed',
      runs: RUNS,
      'p50 ms': Math.round(percentile(waits, 50)),
      'max ms': Math.round(Math.max(...waits)),
    });
    console.table(rows);
  });
});
