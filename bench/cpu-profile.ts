import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and accounts for a load's CPU time request by
 * request: every sample taken inside the load's window is given to the first step of the
 * token endpoint found walking its stack from the leaf to the root (so a `pg` parse under
 * the grant read counts as the driver, the read's own code as the read), then divided by the
 * requests answered in that window.
 *
 * The window is given in the monotonic clock of `process.hrtime` (microseconds), which is
 * the clock of V8's sample timestamps on Linux.
 */

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/**
 * A step of the request: a name and how to recognise its frames (file path or function
 * name). A generic step (Node's own modules, the catch-alls) is used only for a sample with
 * no specific step anywhere on its stack.
 */
interface Step {
  readonly name: string;
  readonly matches: (frame: CallFrame) => boolean;
  readonly generic?: boolean;
}

const inFile =
  (...parts: readonly string[]) =>
  (frame: CallFrame): boolean =>
    parts.some((part) => frame.url.includes(part));

/**
 * The token endpoint's steps, most specific first where one lives inside another's files.
 * Frames of the broker are matched by their compiled file (`dist/libs/...`), libraries by
 * their package directory, Node's own by its `node:` module.
 */
export const STEPS: readonly Step[] = [
  { name: 'garbage collection', matches: (f) => f.functionName === '(garbage collector)' },
  { name: 'JWT verification, full (signature, claims)', matches: inFile('node_modules/jose/', '/jwt/compact-jws') },
  {
    name: 'JWT verification cache (hash, lookup, key set)',
    matches: inFile(
      '/jwt/verified-jwt-cache',
      '/jwt/jwt-verifier',
      '/jwt/remote-key-set',
      '/token-exchange/trust-anchor',
    ),
  },
  {
    name: 'gateway rules (CEL, parties, identity)',
    matches: inFile(
      '/token-exchange/gateway-credentials',
      '@marcbachmann/cel-js',
      '/token/config-expression',
      '/domain/src/cel',
    ),
  },
  {
    name: 'PostgreSQL driver (pg)',
    matches: inFile(
      'node_modules/pg/',
      'node_modules/pg-protocol/',
      'node_modules/pg-pool/',
      'node_modules/pg-types/',
      'node_modules/postgres-',
    ),
  },
  { name: 'TypeORM', matches: inFile('node_modules/typeorm/') },
  {
    name: 'grant and session read (query, caches)',
    matches: inFile(
      '/registry/exchange-lookup',
      '/prepared-query',
      '/registry/session.repository',
      '/registry/grant.repository',
      '/registry/exchange-context-cache',
    ),
  },
  { name: 'vault (decrypt, refresh check)', matches: inFile('/libs/vault/') },
  { name: 'activity ledger (event enqueue)', matches: inFile('/events/', 'event-ledger') },
  { name: 'audit record', matches: inFile('/libs/audit/') },
  { name: 'metrics', matches: inFile('node_modules/prom-client/', '/telemetry/src/metrics', '/http/src/metrics') },
  {
    name: 'trace context (ids, traceresponse)',
    matches: inFile('/http/src/trace/', '/telemetry/src/tracing', '@opentelemetry'),
  },
  {
    name: 'statement counter, request stores (AsyncLocalStorage)',
    matches: (f) =>
      inFile(
        '/logging/query-count',
        'nestjs-pino/storage',
        'node:async_hooks',
        'node:internal/async_hooks',
        'node:internal/async_local_storage',
      )(f),
  },
  {
    name: 'logging (pino, access log)',
    matches: inFile(
      'node_modules/pino',
      'node_modules/nestjs-pino',
      'node_modules/sonic-boom',
      'node_modules/fast-redact',
      'node_modules/thread-stream',
      '/http/src/logging/',
      '/libs/http/src/logging',
    ),
  },
  { name: 'token form and grant dispatch', matches: inFile('/oauth-server/src/token/') },
  {
    name: 'token exchange grant (steps, response)',
    matches: inFile('/oauth-server/src/token-exchange/token-exchange.grant'),
  },
  {
    name: 'hot route (body read, shutdown gate, answer)',
    matches: inFile('/http/src/hot-routes/', '/http/src/body/', '/http/src/lifecycle/', '/http/src/errors/'),
  },
  {
    name: 'HTTP server (node:http, net, streams)',
    matches: (f) =>
      /^node:(_http_|net|internal\/(streams|http|stream_base|net))/.test(f.url) ||
      f.functionName === 'parserOnHeadersComplete' ||
      f.functionName === 'parserOnIncoming',
    generic: true,
  },
  {
    name: 'crypto, buffers, timers (node)',
    matches: (f) => /^node:(crypto|internal\/crypto|buffer|internal\/buffer|timers|internal\/timers)/.test(f.url),
    generic: true,
  },
  {
    name: 'Express, Nest (not on the hot route)',
    matches: inFile(
      'node_modules/express/',
      'node_modules/router/',
      'node_modules/@nestjs/',
      'node_modules/body-parser/',
    ),
  },
  { name: 'broker, other', matches: inFile('/dist/'), generic: true },
  { name: 'promises, microtasks, event loop (node)', matches: (f) => f.url.startsWith('node:'), generic: true },
  { name: 'native (V8, libuv, syscalls: "(program)")', matches: (f) => f.functionName === '(program)' },
];
const OTHER = 'other JavaScript';

export interface StepCost {
  readonly step: string;
  readonly ms: number;
  readonly usPerRequest: number;
  readonly share: string;
}

export interface ProfileSummary {
  readonly rows: readonly StepCost[];
  /** CPU time of the window (idle excluded), in µs per request. */
  readonly usPerRequest: number;
  readonly busyShare: string;
}

/** The newest `.cpuprofile` written into `dir` (Node writes one per process on exit). */
export function profileIn(dir: string): string {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`expected one .cpuprofile in ${dir}, found ${files.length}`);
  return join(dir, files[0] as string);
}

/**
 * The per-request cost of each step, from `file`, over samples in [fromUs, toUs] (monotonic
 * µs), for `requests` answered. V8 samples by the wall clock: a thread the kernel set aside
 * for another process (the load generator, PostgreSQL, on two shared cores) keeps its last
 * stack meanwhile. So each step's share of the samples is applied to `cpuUs`, the CPU time
 * the kernel counted for the process in the window, when given.
 */
export function summarizeProfile(
  file: string,
  window: { readonly fromUs: number; readonly toUs: number },
  requests: number,
  cpuUs?: number,
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const specific = STEPS.filter((s) => s.generic !== true);
  const generic = STEPS.filter((s) => s.generic === true);
  // The innermost step on the stack of node `id` among `steps` (null: none), memoised per list.
  const innermost = (steps: readonly Step[], memo: Map<number, string | null>) => {
    const find = (id: number): string | null => {
      const known = memo.get(id);
      if (known !== undefined) return known;
      const frame = (byId.get(id) as ProfileNode).callFrame;
      const up = parent.get(id);
      const step = steps.find((s) => s.matches(frame))?.name ?? (up === undefined ? null : find(up));
      memo.set(id, step);
      return step;
    };
    return find;
  };
  const specificOf = innermost(specific, new Map());
  const genericOf = innermost(generic, new Map());
  const classify = (id: number): string | null => {
    if ((byId.get(id) as ProfileNode).callFrame.functionName === '(idle)') return null;
    return specificOf(id) ?? genericOf(id) ?? OTHER;
  };
  const totals = new Map<string, number>();
  let time = profile.startTime;
  let idle = 0;
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const delta = profile.timeDeltas[i] as number;
    time += delta;
    if (time < window.fromUs || time > window.toUs) continue;
    const step = classify(profile.samples[i] as number);
    if (step === null) {
      idle += delta;
      continue;
    }
    busy += delta;
    totals.set(step, (totals.get(step) ?? 0) + delta);
  }
  const order = [...STEPS.map((s) => s.name), OTHER];
  const scale = cpuUs === undefined ? 1 : cpuUs / busy;
  const rows = order
    .filter((name) => totals.has(name))
    .map((name) => {
      const us = (totals.get(name) as number) * scale;
      return {
        step: name,
        ms: Math.round(us / 1000),
        usPerRequest: Number((us / requests).toFixed(1)),
        share: `${((100 * us) / (busy * scale)).toFixed(1)} %`,
      };
    });
  return {
    rows,
    usPerRequest: Number(((busy * scale) / requests).toFixed(1)),
    busyShare: `${((100 * busy) / (busy + idle)).toFixed(0)} %`,
  };
}
