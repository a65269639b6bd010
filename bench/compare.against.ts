import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgresCluster, type PostgresCluster } from '@broker/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { profileIn, summarizeProfile, type ProfileSummary } from './cpu-profile';
import { expectOk, SMALL } from './deployment';
import { deployBroker, SHAPES, startReference, type BrokerDeployment } from './exchange-deployment';
import { GatewayIssuer } from './gateway-issuer';
import { alternate, averages, FORM_HEADERS, measureLoad, ratio, table, type Measurement, type Row } from './load';
import { takeMachine } from './machine-lock';
import { RefreshLoads } from './refresh-loads';
import { cpuSecondsBetween, startScriptServer, treeCpuTicks, type ServerProcess } from './servers';

/**
 * `npm run bench -- --against <git ref>` (bench/bench.mjs builds the ref in a temporary
 * worktree and runs this file): this checkout's broker, the ref's broker and the bare
 * reference (bench/reference-server.mjs) in one run, on one PostgreSQL cluster, each broker
 * on its own database seeded alike (1k grants), loaded in turn (A B C A B C) with the token
 * exchange's two shapes, then client_credentials next to oidc-provider. Prints req/s and p99
 * and the ratios: this build and the ref against the reference, this build against the ref.
 * Then the two builds alone (A B A B), on the same databases: the refresh token grant and
 * RFC 7662 introspection of a refresh token and of an access token (bench/refresh-loads.ts:
 * families started through each build's own authorization code grant), this build against
 * the ref.
 *
 * With BENCH_PROFILE=1 it profiles instead (`node --cpu-prof`, one run of each load per
 * build: reused tokens, fresh tokens, client_credentials; not the refresh and introspection
 * loads) and prints each build's CPU time per request, step by step (bench/cpu-profile.ts).
 * Throughput is not measured in that mode: the profiler costs time.
 *
 * Environment (set by bench/bench.mjs): BENCH_AGAINST_DIR, the ref's checkout with its
 * `dist` built; BENCH_AGAINST_REF, its name for the tables.
 */
// eslint-disable-next-line no-restricted-properties -- knobs of the benchmark harness, not broker configuration
const benchEnvironment = process.env;
const {
  BENCH_AGAINST_DIR: againstDir,
  BENCH_AGAINST_REF: againstRef = 'ref',
  BENCH_PROFILE: profileMode,
} = benchEnvironment;
const CONNECTIONS = 50;
const ROUNDS = 2;
const NOW = 'this build';
const THEN = `at ${againstRef}`;
const REFERENCE = 'reference';

interface Target {
  readonly name: string;
  readonly url: string;
  /** Whose bodies the target is loaded with (the reference shares this build's database and audience). */
  readonly deployment: BrokerDeployment;
}

describe(`this build against ${againstRef} and the bare reference (PostgreSQL, ${SMALL.label})`, () => {
  let releaseMachine: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let issuer: GatewayIssuer | undefined;
  let now: BrokerDeployment | undefined;
  let then: BrokerDeployment | undefined;
  let reference: (ServerProcess & { readonly url: string }) | undefined;
  const profileDirs: string[] = [];

  beforeAll(async () => {
    if (againstDir === undefined)
      throw new Error('BENCH_AGAINST_DIR is not set: run `npm run bench -- --against <git ref>`');
    releaseMachine = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('this benchmark needs PostgreSQL (initdb/pg_ctl)');
    issuer = await GatewayIssuer.start();
    const launch = (entryRoot: string): { entryPoint: string; nodeArgs: string[] } => {
      const nodeArgs: string[] = [];
      if (profileMode === '1') {
        const dir = mkdtempSync(join(tmpdir(), 'broker-profile-'));
        profileDirs.push(dir);
        nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
      }
      return { entryPoint: join(entryRoot, 'dist/apps/broker/src/main.js'), nodeArgs };
    };
    now = await deployBroker(cluster, issuer, SMALL, launch(process.cwd()));
    then = await deployBroker(cluster, issuer, SMALL, launch(againstDir));
    if (profileMode !== '1') reference = await startReference(now, issuer);
    console.log(
      `machine: node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${cluster.version}; load: autocannon, ${CONNECTIONS} connections`,
    );
  }, 900_000);

  afterAll(async () => {
    await Promise.all([now?.stop(), then?.stop(), reference?.stop()]);
    await issuer?.stop();
    cluster?.stop();
    // The profiles stay for a closer look (Chrome DevTools, or speedscope): their paths are printed.
    releaseMachine?.();
  });

  it.runIf(profileMode !== '1')(
    'token exchange and client_credentials, alternating',
    async () => {
      const b = now as BrokerDeployment;
      const targets: Target[] = [
        { name: NOW, url: `${b.broker.enduserUrl}/oauth2/token`, deployment: b },
        {
          name: THEN,
          url: `${(then as BrokerDeployment).broker.enduserUrl}/oauth2/token`,
          deployment: then as BrokerDeployment,
        },
        { name: REFERENCE, url: `${(reference as { url: string }).url}/token`, deployment: b },
      ];
      const rows = await alternate(ROUNDS, SHAPES, targets, async (shape, target) => {
        const { bodies, cycle } = shape.bodies(target.deployment);
        const run = await measureLoad({
          url: target.url,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies,
          cycle,
          connections: CONNECTIONS,
        });
        shape.spent?.(target.deployment, run);
        return run;
      });
      console.log(
        `\ntoken exchange, ${CONNECTIONS} connections, ${NOW} / ${THEN} / ${REFERENCE} in turn, ${ROUNDS} rounds`,
      );
      console.table(table(rows));
      console.table(SHAPES.flatMap(({ name }) => ratios(rows, name, REFERENCE)));
      await clientCredentials([now as BrokerDeployment, then as BrokerDeployment]);
    },
    1_800_000,
  );

  it.runIf(profileMode !== '1')(
    'refresh_token and introspection, alternating',
    async () => {
      const targets: RefreshTarget[] = [];
      for (const [name, deployment] of [
        [NOW, now],
        [THEN, then],
      ] as const) {
        const d = deployment as BrokerDeployment;
        const loads = await RefreshLoads.prepare(d);
        // The first round's tokens now, so that no build's first run follows its own seeding.
        await loads.ready();
        targets.push({ name, url: d.broker.enduserUrl, loads });
      }
      const rows = await alternate(ROUNDS, REFRESH_SHAPES, targets, (shape, target) =>
        refreshOrIntrospection(shape.name, target),
      );
      console.log(
        `\nrefresh_token and introspection, ${CONNECTIONS} connections, ${NOW} / ${THEN} in turn, ${ROUNDS} rounds`,
      );
      console.table(table(rows));
      console.table(REFRESH_SHAPES.map(({ name }) => pair(rows, name, NOW, THEN)));
      for (const target of targets) console.log(`${target.name}: ${target.loads.summary()}`);
    },
    1_800_000,
  );

  it.runIf(profileMode === '1')(
    'profile of each load, per request',
    async () => {
      const loads = ['(b) reused tokens', '(a) fresh tokens', 'client_credentials'] as const;
      const summaries = new Map<string, [string, ProfileSummary][]>(loads.map((load) => [load, []]));
      for (const [index, [name, deployment]] of (
        [
          [NOW, now],
          [THEN, then],
        ] as const
      ).entries()) {
        const d = deployment as BrokerDeployment;
        const url = `${d.broker.enduserUrl}/oauth2/token`;
        const { client_secret: secret } = await d.adminPost<{ client_secret: string }>(
          `/api/agents/${d.agentId}/client-credentials`,
          {},
        );
        const windows: { load: string; fromUs: number; toUs: number; requests: number; cpuUs: number }[] = [];
        for (const load of loads) {
          const spec =
            load === '(b) reused tokens'
              ? { bodies: d.reusedBodies, cycle: true }
              : load === '(a) fresh tokens'
                ? { bodies: d.fresh.ready(), cycle: false }
                : {
                    bodies: [
                      new URLSearchParams({
                        grant_type: 'client_credentials',
                        client_id: d.agentId,
                        client_secret: secret,
                        scope: 'read',
                      }).toString(),
                    ],
                    cycle: true,
                  };
          const fromUs = Number(process.hrtime.bigint() / 1000n);
          const cpuBefore = treeCpuTicks(d.broker.pid);
          const run = await measureLoad({
            url,
            method: 'POST',
            headers: FORM_HEADERS,
            ...spec,
            connections: CONNECTIONS,
          });
          const cpuUs = cpuSecondsBetween(cpuBefore, treeCpuTicks(d.broker.pid)) * 1e6;
          windows.push({ load, fromUs, toUs: Number(process.hrtime.bigint() / 1000n), requests: run.requests, cpuUs });
          if (load === '(a) fresh tokens') d.fresh.spend(run);
          console.log(
            `${name}, ${load}: ${Math.round(run.rps)} req/s under the profiler, ${run.requests} requests answered`,
          );
        }
        await d.stop();
        const file = profileIn(profileDirs[index] as string);
        console.log(`${name}: profile ${file}`);
        for (const w of windows) summaries.get(w.load)?.push([name, summarizeProfile(file, w, w.requests, w.cpuUs)]);
      }
      for (const [load, perBuild] of summaries) {
        const steps = [...new Set(perBuild.flatMap(([, s]) => s.rows.map((r) => r.step)))];
        console.log(
          `\n${load}: CPU time per request by step (µs: the process's CPU time in the window, shared by the profile's samples)`,
        );
        console.table(
          steps.map((step) => {
            const row: Record<string, string | number> = { step };
            for (const [name, s] of perBuild)
              row[`${name} µs`] = s.rows.find((r) => r.step === step)?.usPerRequest ?? 0;
            return row;
          }),
        );
        console.table(
          perBuild.map(([name, s]) => ({
            build: name,
            'CPU µs per request': s.usPerRequest,
            'samples not idle': s.busyShare,
          })),
        );
      }
    },
    1_800_000,
  );
});

/** `a` against `b` in `shape`: the ratios of their mean req/s and mean p99 over the rounds. */
function pair(rows: readonly Row[], shape: string, a: string, b: string): Record<string, string> {
  const of = (target: string) => averages(rows, target, shape);
  return {
    shape,
    ratio: `${a} / ${b}`,
    'req/s': ratio({ value: of(a).rps, valid: of(a).valid }, { value: of(b).rps, valid: of(b).valid }),
    p99: ratio({ value: of(a).p99, valid: of(a).valid }, { value: of(b).p99, valid: of(b).valid }),
  };
}

/** Each build against `base` and this build against the ref, for `shape`. */
function ratios(rows: readonly Row[], shape: string, base: string): Record<string, string>[] {
  return [pair(rows, shape, NOW, base), pair(rows, shape, THEN, base), pair(rows, shape, NOW, THEN)];
}

const REFRESH_SHAPES = [
  { name: 'refresh_token' },
  { name: 'introspection: refresh token' },
  { name: 'introspection: access token' },
  { name: 'introspection: access token, first time' },
] as const;

interface RefreshTarget {
  readonly name: string;
  /** The broker's end-user server. */
  readonly url: string;
  readonly loads: RefreshLoads;
}

/** One run of `shape` against `target`'s broker (bench/refresh-loads.ts says what each sends). */
async function refreshOrIntrospection(
  shape: (typeof REFRESH_SHAPES)[number]['name'],
  { url, loads }: RefreshTarget,
): Promise<Measurement> {
  const load = (path: string, bodies: readonly string[], cycle: boolean): Promise<Measurement> =>
    measureLoad({
      url: `${url}${path}`,
      method: 'POST',
      headers: loads.headers,
      bodies,
      cycle,
      connections: CONNECTIONS,
    });
  switch (shape) {
    case 'refresh_token': {
      const run = await load('/oauth2/token', await loads.refreshBodies(), false);
      loads.spentRefresh(run);
      return run;
    }
    case 'introspection: refresh token':
      return load('/oauth2/introspect', loads.refreshIntrospections, true);
    case 'introspection: access token':
      return load('/oauth2/introspect', loads.accessIntrospections, true);
    case 'introspection: access token, first time': {
      const run = await load('/oauth2/introspect', await loads.firstIntrospectionBodies(), false);
      loads.spentFirstIntrospection(run);
      return run;
    }
  }
}

/** client_credentials on both builds next to oidc-provider's opaque tokens, in turn. */
async function clientCredentials(deployments: readonly BrokerDeployment[]): Promise<void> {
  const form = (clientId: string, clientSecret: string): string =>
    new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      scope: 'read',
    }).toString();
  const targets: { name: string; url: string; body: string }[] = [];
  for (const [i, d] of deployments.entries()) {
    const { client_secret: secret } = await d.adminPost<{ client_secret: string }>(
      `/api/agents/${d.agentId}/client-credentials`,
      {},
    );
    targets.push({
      name: i === 0 ? NOW : THEN,
      url: `${d.broker.enduserUrl}/oauth2/token`,
      body: form(d.agentId, secret),
    });
  }
  const provider = await startScriptServer('oidc-provider-server.mjs', [], { quiet: true });
  try {
    targets.push({
      name: 'oidc-provider',
      url: `${provider.url}/token`,
      body: form('bench', 'bench-secret-0123456789'),
    });
    for (const target of targets) await expectOk(target.url, target.body);
    const rows = await alternate(ROUNDS, [{ name: 'client_credentials' }], targets, (_shape, target) =>
      measureLoad({
        url: target.url,
        method: 'POST',
        headers: FORM_HEADERS,
        bodies: [target.body],
        connections: CONNECTIONS,
      }),
    );
    console.log(`\nclient_credentials, ${CONNECTIONS} connections, in turn`);
    console.table(table(rows));
    console.table(ratios(rows, 'client_credentials', 'oidc-provider'));
  } finally {
    await provider.stop();
  }
}
