import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Load generation for the PostgreSQL benchmarks: autocannon (bench/load-generator.mjs) in a
 * worker thread per run, so this process's event loop, which seeds databases and signs
 * tokens between runs, is idle while a run is measured. Every run has a warm-up that is
 * not counted.
 */
/** BENCH_QUICK=1: 1 s warm-up and 3 s runs, to prove a benchmark works (smoke); never numbers for RESULTS.md. */
// eslint-disable-next-line no-restricted-properties -- a knob of the benchmark harness, not broker configuration
export const QUICK = process.env.BENCH_QUICK === '1';
export const WARMUP_SECONDS = QUICK ? 1 : 2;
export const DURATION_SECONDS = QUICK ? 3 : 10;

/** The token-exchange benchmarks' shared request shape: one protected resource, form-encoded bodies. */
export const EXCHANGE_RESOURCE = 'https://bench-api.example.com';
export const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded' } as const;
/** The constant part of every token-exchange body; JWTs are URL-safe, so they are appended unencoded. */
export const EXCHANGE_FORM = new URLSearchParams({
  grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
  client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
  subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
  resource: EXCHANGE_RESOURCE,
}).toString();
/**
 * Shape (a) of the exchange benchmarks spends a token pair per request: its pool of bodies is
 * signed for at least this rate over warm-up plus run (token-exchange.measure.ts also for 1.5x
 * the fastest run seen so far, if higher), so no token reaches a server twice.
 */
export const FRESH_RATE_CEILING = 4_000;

export interface LoadSpec {
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  /** No body, one body for every request, or bodies handed out in order. */
  readonly bodies?: readonly string[];
  /** Headers added to one request each, handed out in order with the bodies (a DPoP proof per request). */
  readonly headersPerRequest?: readonly Readonly<Record<string, string>>[];
  /** Go round `bodies` (and `headersPerRequest`) again when they run out (reuse intended); otherwise reuse is counted. */
  readonly cycle?: boolean;
  readonly connections: number;
  /** The one status the run measures (e.g. 400 for a CIBA poll answered authorization_pending); default any 2xx. */
  readonly expectedStatus?: number;
}

/** One measured run. Latencies (ms) are of 2xx responses (or of `expectedStatus`) only; errors are counted apart. */
export interface Measurement {
  readonly requests: number;
  readonly rps: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  /** Responses other than 2xx (other than `expectedStatus` when the run names one). */
  readonly non2xx: number;
  /** The status the run measured, when not any 2xx. */
  readonly expectedStatus?: number;
  /** Connection errors and timeouts. */
  readonly socketErrors: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  /** Bodies or header sets handed out (warm-up included): spent, whatever became of them. */
  readonly spent: number;
  /** Requests that had to reuse a body or header set although `cycle` was false. */
  readonly reusedBodies: number;
}

export function measureLoad(spec: LoadSpec): Promise<Measurement> {
  const worker = new Worker(resolve('bench/load-generator.mjs'), {
    workerData: {
      url: spec.url,
      method: spec.method ?? 'GET',
      headers: spec.headers ?? {},
      bodies: spec.bodies,
      headersPerRequest: spec.headersPerRequest,
      cycle: spec.cycle ?? true,
      connections: spec.connections,
      expectedStatus: spec.expectedStatus,
      warmupSeconds: WARMUP_SECONDS,
      durationSeconds: DURATION_SECONDS,
    },
  });
  return new Promise<Measurement>((done, fail) => {
    worker.once('message', (measurement: Measurement) => {
      done(measurement);
      void worker.terminate();
    });
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`the load generator exited with ${code} before reporting`)));
  });
}

/** One row of a results table. */
export interface Row {
  readonly target: string;
  readonly shape: string;
  readonly round: number;
  readonly measurement: Measurement;
}

/**
 * Runs every shape against every target, `rounds` times, alternating targets run by run
 * (A B A B), so that a drift of the machine (thermal, noisy neighbour, autovacuum) spreads
 * over both instead of favouring whichever ran first.
 */
export async function alternate<Target extends { readonly name: string }, Shape extends { readonly name: string }>(
  rounds: number,
  shapes: readonly Shape[],
  targets: readonly Target[],
  run: (shape: Shape, target: Target, round: number) => Promise<Measurement>,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    for (const shape of shapes) {
      for (const target of targets)
        rows.push({ target: target.name, shape: shape.name, round, measurement: await run(shape, target, round) });
    }
  }
  return rows;
}

export const errorsOf = (m: Measurement): number => m.non2xx + m.socketErrors;

const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : '-');

type Percentile = 'p50' | 'p95' | 'p99';

/** Why a run is not a valid number ('' when it is). */
function invalidity(m: Measurement): string {
  const problems = Object.entries(m.statusCodes)
    .filter(([code]) => (m.expectedStatus === undefined ? !code.startsWith('2') : Number(code) !== m.expectedStatus))
    .map(([code, count]) => `${count} x ${code}`);
  if (m.socketErrors > 0) problems.push(`${m.socketErrors} socket errors/timeouts`);
  if (m.reusedBodies > 0) problems.push(`ran out of fresh bodies, ${m.reusedBodies} reused`);
  return problems.length === 0 ? '' : `INVALID: ${problems.join(', ')}`;
}

/** The printable form of rows: a run with errors or reused bodies is not a valid number and says so. */
export function table(
  rows: readonly Row[],
  percentiles: readonly Percentile[] = ['p50', 'p99'],
): Record<string, string | number>[] {
  return rows.map(({ target, shape, round, measurement: m }) => {
    const note = invalidity(m);
    const latencies = Object.fromEntries(percentiles.map((p) => [`${p} ms`, ms(m[p])]));
    return {
      target,
      shape,
      round,
      'req/s': Math.round(m.rps),
      ...latencies,
      errors: errorsOf(m),
      ...(note === '' ? {} : { note }),
    };
  });
}

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** Mean req/s and p99 of `target` in `shape` over its rounds (NaN when it did not run). */
export function averages(
  rows: readonly Row[],
  target: string,
  shape: string,
): { rps: number; p99: number; valid: boolean } {
  const own = rows.filter((r) => r.target === target && r.shape === shape).map((r) => r.measurement);
  return {
    rps: mean(own.map((m) => m.rps)),
    p99: mean(own.map((m) => m.p99)),
    valid: own.length > 0 && own.every((m) => invalidity(m) === ''),
  };
}

/** `a / b` to two decimals, marked when either side had an invalid run. */
export function ratio(a: { value: number; valid: boolean }, b: { value: number; valid: boolean }): string {
  return `${(a.value / b.value).toFixed(2)}x${a.valid && b.valid ? '' : ' (INVALID: a run had errors or reused tokens)'}`;
}
