import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '@broker/config';
import { http, startTestBroker, type TestBroker } from '@broker/testing';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CATALOGUE, type Family } from '../support/metric-catalogue';
import { BOTH_SERVERS } from '../support/servers';

/**
 * The dashboard, alert rules and compose services in docker/ cannot run here
 * (no Docker engine), so this test holds them to what can be checked: the files parse, the
 * compose file mounts files that exist, and every metric and label an expression names is one
 * the broker exports.
 */

const DOCKER = resolve('docker');
const readYaml = <T>(path: string): T => parse(readFileSync(resolve(DOCKER, path), 'utf8')) as T;

/** Labels Prometheus attaches to every series of a target (scrape config), not the broker. */
const TARGET_LABELS = new Set(['job', 'instance', 'deployment']);

/** prom-client's default process_* / nodejs_* families, as the broker registers them. */
async function defaultFamilies(): Promise<Map<string, Family>> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const families = new Map<string, Family>();
  for (const metric of await registry.getMetricsAsJSON()) {
    const labels = new Set<string>();
    for (const value of metric.values)
      for (const name of Object.keys(value.labels)) if (name !== 'le') labels.add(name);
    families.set(metric.name, { type: String(metric.type) as Family['type'], labels: [...labels] });
  }
  return families;
}

/** A series name in an expression: broker_*, nodejs_*, process_* (label values and Grafana variables never match). */
const SERIES = /(?<![\w$"])((?:broker|nodejs|process)_[A-Za-z0-9_]+)/g;

/** The family a series name belongs to: a histogram's _bucket/_sum/_count series name the histogram. */
function familyOf(series: string, known: ReadonlyMap<string, Family>): string | undefined {
  if (known.has(series)) return series;
  const base = series.replace(/_(bucket|sum|count)$/, '');
  return base !== series && known.get(base)?.type === 'histogram' ? base : undefined;
}

interface ExprUse {
  /** Series names, each with the label names of the matchers written on it (`name{label="…"}`). */
  readonly series: ReadonlyArray<{ readonly name: string; readonly matchers: readonly string[] }>;
  /** Labels of `by (…)`, `without (…)`, `on (…)`, `ignoring (…)`. */
  readonly grouping: readonly string[];
}

function usesOf(expr: string): ExprUse {
  const series = [...expr.matchAll(new RegExp(`${SERIES.source}(\\{[^}]*\\})?`, 'g'))].map((match) => ({
    name: match[1] ?? '',
    matchers: [...(match[2] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1] ?? ''),
  }));
  const grouping = [...expr.matchAll(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g)].flatMap((match) =>
    (match[1] ?? '')
      .split(',')
      .map((label) => label.trim())
      .filter((label) => label !== ''),
  );
  return { series, grouping };
}

/** Bracket and quote balance: what a typo breaks first (there is no PromQL parser among the dependencies). */
function balanced(expr: string): boolean {
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  let quoted = false;
  for (const char of expr) {
    if (char === '"') quoted = !quoted;
    else if (quoted) continue;
    else if ('([{'.includes(char)) stack.push(char);
    else if (char in pairs && stack.pop() !== pairs[char]) return false;
  }
  return !quoted && stack.length === 0;
}

/**
 * Problems of one expression against the families `known`: unknown series, a matcher label the
 * series does not have, a grouping label one of its series lacks (`le` only with _bucket).
 */
function problemsOf(expr: string, known: ReadonlyMap<string, Family>): string[] {
  const problems: string[] = [];
  if (!balanced(expr)) problems.push(`unbalanced brackets or quotes: ${expr}`);
  const use = usesOf(expr);
  for (const { name, matchers } of use.series) {
    const family = familyOf(name, known);
    if (family === undefined) {
      problems.push(`unknown series ${name}`);
      continue;
    }
    const labels = new Set([...known.get(family)!.labels, ...TARGET_LABELS]);
    for (const label of matchers) if (!labels.has(label)) problems.push(`${name} has no label ${label}`);
    for (const label of use.grouping) {
      if (label === 'le' ? !name.endsWith('_bucket') : !labels.has(label))
        problems.push(`${name} has no label ${label} (grouping)`);
    }
  }
  return problems;
}

interface Rule {
  alert?: string;
  record?: string;
  expr?: string;
  for?: string;
  labels?: { severity?: string };
  annotations?: { summary?: string; description?: string };
}
interface Target {
  refId?: string;
  expr?: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; datasource?: { uid?: string }; query?: { query?: string } }> };
}
interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, unknown> | string[];
}
interface Compose {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const compose = readYaml<Compose>('compose.yaml');
/** A compose service by name, failing the test when it is missing. */
function service(name: string): ComposeService {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`docker/compose.yaml has no service ${name}`);
  return found;
}
const prometheus = readYaml<{
  rule_files: string[];
  scrape_configs: Array<{ job_name: string; metrics_path?: string; static_configs: Array<{ targets: string[] }> }>;
}>('prometheus/prometheus.yml');
const rules = readYaml<{ groups: Array<{ name: string; rules: Rule[] }> }>('prometheus/alerts.yml').groups.flatMap(
  (group) => group.rules,
);
const datasources = readYaml<{ apiVersion: number; datasources: Array<{ uid: string; type: string; url: string }> }>(
  'grafana/provisioning/datasources/prometheus.yml',
);
const providers = readYaml<{ apiVersion: number; providers: Array<{ type: string; options: { path: string } }> }>(
  'grafana/provisioning/dashboards/broker.yml',
);
const dashboard = JSON.parse(readFileSync(resolve(DOCKER, 'grafana/dashboards/broker.json'), 'utf8')) as Dashboard;
const queryPanels = dashboard.panels.filter((panel) => panel.type !== 'row');

/** Where a compose service mounts a file or folder of docker/ (`./src:/target[:ro]`), by target. */
function bindMounts(name: string): Map<string, string> {
  const mounts = new Map<string, string>();
  for (const volume of service(name).volumes ?? []) {
    const [source = '', target = ''] = volume.split(':');
    if (source.startsWith('.')) mounts.set(target, source);
  }
  return mounts;
}

/** Every expression of the alert rules and the dashboard, named for the failure message. */
function allExpressions(): Array<{ where: string; expr: string }> {
  return [
    ...rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr ?? '' })),
    ...queryPanels.flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({
        where: `panel "${panel.title}" ${target.refId}`,
        expr: target.expr ?? '',
      })),
    ),
  ];
}

describe('docker/compose.yaml with Prometheus and Grafana', () => {
  it('pins every image to a version and mounts only files that exist in docker/', () => {
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(['postgres', 'broker', 'prometheus', 'grafana']),
    );
    for (const [name, { image, build, volumes }] of Object.entries(compose.services)) {
      if (image !== undefined) expect(image, name).toMatch(/^[\w./-]+:(?!latest$)[\w.-]+$/);
      else expect(existsSync(resolve(DOCKER, build?.context ?? '-', build?.dockerfile ?? '-')), name).toBe(true);
      for (const volume of volumes ?? []) {
        const [source = ''] = volume.split(':');
        if (source.startsWith('.')) expect(existsSync(resolve(DOCKER, source)), `${name}: ${source}`).toBe(true);
        else expect(Object.keys(compose.volumes ?? {}), `${name}: ${source}`).toContain(source);
      }
    }
  });

  it('has Prometheus scrape the admin server of the broker service, which trusts the compose network', () => {
    const { config } = loadConfig(['--config', 'docker/broker.compose.yaml'], {
      BROKER_KEK_1: Buffer.alloc(32, 1).toString('base64'),
      BROKER_JWE_KEY_1: Buffer.alloc(32, 2).toString('base64'),
      BROKER_DATABASE_URL: 'postgres://broker:broker@postgres:5432/broker',
    });
    const job = prometheus.scrape_configs.find((scrape) => scrape.job_name === 'broker');
    expect(job?.metrics_path).toBe('/metrics');
    expect(job?.static_configs.flatMap((c) => c.targets)).toEqual([`broker:${config.server.admin.port}`]);
    expect(service('broker').ports).toContain(`${config.server.admin.port}:${config.server.admin.port}`);
    // Docker's default bridge address pools: the Prometheus container scrapes from one of them.
    expect(config.server.admin.authentication.preauth.trusted_sources).toContain('172.16.0.0/12');
    // The rules that select a job select this one (Prometheus' own process_* series must stay out of them).
    const jobs = rules.flatMap((rule) => [...(rule.expr ?? '').matchAll(/\bjob="([^"]*)"/g)].map((match) => match[1]));
    expect(jobs.length).toBeGreaterThan(0);
    expect(new Set(jobs)).toEqual(new Set([job?.job_name]));
    const mounts = bindMounts('prometheus');
    for (const file of prometheus.rule_files) expect(mounts.get(file)).toBe('./prometheus/alerts.yml');
    expect(mounts.get('/etc/prometheus/prometheus.yml')).toBe('./prometheus/prometheus.yml');
  });

  it('provisions Grafana with the compose Prometheus and the dashboard folder', () => {
    const mounts = bindMounts('grafana');
    expect(mounts.get('/etc/grafana/provisioning')).toBe('./grafana/provisioning');
    expect(datasources.apiVersion).toBe(1);
    expect(datasources.datasources).toHaveLength(1);
    expect(datasources.datasources[0]).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
    expect(service('prometheus').ports).toContain('9090:9090');
    expect(providers.apiVersion).toBe(1);
    expect(providers.providers.map((provider) => [provider.type, mounts.get(provider.options.path)])).toEqual([
      ['file', './grafana/dashboards'],
    ]);
  });
});

describe('docker/prometheus/alerts.yml', () => {
  it('gives every rule an alert name, expression, duration, severity and summary', () => {
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^Broker[A-Za-z0-9]+$/);
      expect(rule.expr?.trim(), rule.alert).toBeTruthy();
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary?.trim(), rule.alert).toBeTruthy();
    }
    expect(new Set(rules.map((rule) => rule.alert)).size).toBe(rules.length);
  });

  it('alerts on down, 5xx rate, refresh failures, key set fetches, re-authentication rising, long-poll waiters', () => {
    const watched = (series: string): string[] =>
      rules.filter((rule) => rule.expr?.includes(series)).map((rule) => rule.alert!);
    expect(rules.find((rule) => rule.alert === 'BrokerDown')?.expr).toBe('up{job="broker"} == 0');
    expect(rules.some((rule) => rule.expr?.includes('status_class="5xx"'))).toBe(true);
    expect(rules.some((rule) => rule.expr?.includes('broker_vault_refreshes_total{outcome="refresh_failed"}'))).toBe(
      true,
    );
    expect(watched('broker_key_set_fetch_failures_total').length).toBeGreaterThan(0);
    expect(watched('delta(broker_sessions_needing_reauthentication').length).toBeGreaterThan(0);
    expect(watched('broker_approval_waiters').length).toBeGreaterThan(0);
    expect(watched('process_max_fds').length).toBeGreaterThan(0);
  });
});

describe('docker/grafana/dashboards/broker.json', () => {
  it('queries the provisioned data source from every panel and variable', () => {
    const uid = datasources.datasources[0]?.uid;
    expect(dashboard.uid).toBe('agent-identity-broker');
    expect(queryPanels.length).toBeGreaterThan(0);
    expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
    for (const panel of queryPanels) {
      expect(panel.datasource?.uid, panel.title).toBe(uid);
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        expect(target.datasource?.uid, panel.title).toBe(uid);
        expect(target.expr?.trim(), panel.title).toBeTruthy();
      }
    }
    for (const variable of dashboard.templating.list) expect(variable.datasource?.uid, variable.name).toBe(uid);
  });

  it('names in each legend only labels its query groups by', () => {
    for (const panel of queryPanels) {
      for (const target of panel.targets ?? []) {
        const grouping = new Set(usesOf(target.expr ?? '').grouping);
        for (const [, label] of (target.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g))
          expect(grouping, `${panel.title}: ${label}`).toContain(label);
      }
    }
  });

  it('shows every broker family at least once', () => {
    const shown = new Set(
      queryPanels.flatMap((panel) =>
        (panel.targets ?? []).flatMap((target) =>
          usesOf(target.expr ?? '').series.map((s) => familyOf(s.name, new Map(Object.entries(CATALOGUE)))),
        ),
      ),
    );
    expect([...Object.keys(CATALOGUE)].filter((family) => !shown.has(family))).toEqual([]);
  });
});

describe('metric names and labels in the alert rules and the dashboard', () => {
  it('are families and labels of the broker catalogue and prom-client default metrics', async () => {
    const known = new Map<string, Family>([...Object.entries(CATALOGUE), ...(await defaultFamilies())]);
    const problems = allExpressions().flatMap(({ where, expr }) =>
      problemsOf(expr, known).map((problem) => `${where}: ${problem}`),
    );
    expect(problems).toEqual([]);
    // The checker itself: a misspelt family, a label the family lacks, and a stray bracket are caught.
    expect(problemsOf('sum by (server) (rate(broker_http_request_duration_second_count[5m]))', known)).toHaveLength(1);
    expect(problemsOf('sum by (cache) (rate(broker_token_requests_total{result="hit"}[5m]))', known)).toHaveLength(2);
    expect(
      problemsOf('histogram_quantile(0.9, sum by (le) (rate(broker_db_pglite_wait_seconds_bucket[5m]))', known),
    ).toHaveLength(1);
  });
});

/** One scrape in the text exposition format: each family's type and the label names of its series. */
function parseExposition(text: string): Map<string, { type: string; labels: Set<string> }> {
  const families = new Map<string, { type: string; labels: Set<string> }>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1] ?? '', { type: type[2] ?? '', labels: new Set() });
    const sample = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (sample === null || line.startsWith('#')) continue;
    const name = sample[1] ?? '';
    const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
    for (const [, label] of (sample[2] ?? '').matchAll(/(\w+)="(?:[^"\\]|\\.)*"/g))
      if (label !== 'le') family?.labels.add(label ?? '');
  }
  return families;
}

describe('metric names and labels against a live scrape of the broker', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('finds every family the rules and the dashboard use in GET /metrics, with the labels they group and filter by', async () => {
    // Traffic that fills the labelled families the expressions group by: both servers, a 404, a refused token request.
    expect((await http(`${broker.url('enduser')}/health`)).status).toBe(200);
    expect((await http(`${broker.url('admin')}/health`)).status).toBe(200);
    expect((await http(`${broker.url('enduser')}/no-such-route`)).status).toBe(404);
    const token = await http(`${broker.url('enduser')}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=nobody&client_secret=wrong',
    });
    expect(token.status).toBe(401);
    await http(`${broker.url('admin')}/metrics`);

    const scrape = await http(`${broker.url('admin')}/metrics`);
    expect(scrape.status).toBe(200);
    const scraped = parseExposition(scrape.text);
    const known = new Map<string, Family>();
    for (const [name, family] of scraped) {
      // A family without series yet (no traffic of its kind) shows its type only: take the catalogue's labels for it.
      const labels = family.labels.size > 0 ? [...family.labels] : [...(CATALOGUE[name]?.labels ?? [])];
      known.set(name, { type: family.type as Family['type'], labels });
    }
    for (const [name, family] of Object.entries(CATALOGUE)) expect(scraped.get(name)?.type, name).toBe(family.type);
    // The traffic above fills these; any labelled family with series carries exactly the catalogue's labels.
    for (const name of [
      'broker_http_request_duration_seconds',
      'broker_token_requests_total',
      'broker_db_pool_connections',
    ])
      expect(scraped.get(name)?.labels.size, name).toBeGreaterThan(0);
    for (const [name, family] of Object.entries(CATALOGUE)) {
      const labels = scraped.get(name)?.labels ?? new Set<string>();
      if (labels.size > 0) expect([...labels].sort(), name).toEqual([...family.labels].sort());
    }
    const problems = allExpressions().flatMap(({ where, expr }) =>
      problemsOf(expr, known).map((problem) => `${where}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });
});
