import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './config-error';
import { configSchema, type ParsedConfig } from './config.schema';
import type { BrokerConfig, DevelopmentKeyName, SymmetricKey } from './config.types';
import { loadOrCreateDevelopmentKeys } from './development-keys';
import { substituteEnv } from './env-substitution';
import { checkEnterprise } from './enterprise.schema';
import { checkImpersonation, impersonationIssueKey } from './impersonation.schema';
import { valueAt, writtenPath } from './one-or-many';

/** Environment variable naming the config file when `--config` is not given. */
export const CONFIG_PATH_ENV = 'IDENTITY_BROKER_CONFIG_PATH';

export interface LoadedConfig {
  readonly config: BrokerConfig;
  /** Loud warnings for the log once the logger exists (development keys, ...). */
  readonly warnings: readonly string[];
  /** The config file read, or null when running on defaults. */
  readonly source: string | null;
}

/**
 * Reads the YAML file from `--config FILE` or `IDENTITY_BROKER_CONFIG_PATH` (none:
 * defaults), expands `${VAR}` references, validates and freezes it. Throws
 * `ConfigError` with one line naming the key and the fix.
 */
export function loadConfig(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): LoadedConfig {
  const path = configPathFrom(argv) ?? (env[CONFIG_PATH_ENV] || undefined);
  if (path === undefined) return parseConfig({}, env, null);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      '',
      `file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): check --config / ${CONFIG_PATH_ENV}`,
    );
  }
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (error) {
    throw new ConfigError('', `file ${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  return parseConfig(raw, env, resolve(path));
}

/** Validates an already parsed config tree (also used by tests). */
export function parseConfig(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
  source: string | null = null,
): LoadedConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError('', 'the file must hold a YAML mapping of keys');
  const expanded = substituteEnv(expandDottedKeys(raw), env);
  const result = configSchema.safeParse(expanded);
  if (!result.success) throw toConfigError(result.error, expanded);
  const warnings: string[] = [];
  const config = resolveConfig(result.data, warnings, env);
  return { config: deepFreeze(config), warnings, source };
}

function configPathFrom(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--config') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--'))
        throw new ConfigError('', '--config needs a file path: --config /etc/broker/config.yaml');
      return next;
    }
    if (arg.startsWith('--config=')) return arg.slice('--config='.length);
  }
  return undefined;
}

/** `server.enduser.port: 8000` at any level means `server: {enduser: {port: 8000}}`. */
function expandDottedKeys(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(expandDottedKeys);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const parts = key.split('.');
    let target = out;
    for (const part of parts.slice(0, -1)) {
      const existing = target[part];
      if (existing === undefined) target[part] = {};
      else if (existing === null || typeof existing !== 'object' || Array.isArray(existing)) {
        throw new ConfigError(key, `conflicts with key ${part}: write it once, nested or dotted`);
      }
      target = target[part] as Record<string, unknown>;
    }
    const last = parts[parts.length - 1] as string;
    const expandedValue = expandDottedKeys(value);
    const existing = target[last];
    if (existing !== undefined && isPlainObject(existing) && isPlainObject(expandedValue)) {
      Object.assign(existing, expandedValue);
    } else if (existing !== undefined) {
      throw new ConfigError(key, 'is given twice: keep one');
    } else {
      target[last] = expandedValue;
    }
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function toConfigError(error: z.ZodError, input: unknown): ConfigError {
  const issue = error.issues[0];
  if (issue === undefined) return new ConfigError('', 'is invalid');
  // Inside an impersonation rule the key names the rule (`rules[0] (name).roles`) and zod's own message stands.
  const ruleKey = impersonationIssueKey(input, issue);
  if (ruleKey !== undefined) return new ConfigError(ruleKey, issue.message);
  const path = writtenPath(input, issue.path);
  const key = path.map(String).join('.');
  const got = valueAt(input, path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const unknownKey = [key, issue.keys[0]].filter(Boolean).join('.');
      return new ConfigError(
        unknownKey,
        'is not a known key: remove it or check its spelling (see the configuration reference in README.md)',
      );
    }
    case 'invalid_value':
      return new ConfigError(key, `must be one of ${issue.values.map(String).join(', ')} (got ${describe(got)})`);
    case 'invalid_type':
      if (got === undefined) return new ConfigError(key, `is required (${issue.message})`);
      return new ConfigError(key, `must be ${article(issue.expected)} (got ${describe(got)})`);
    case 'invalid_union':
      return new ConfigError(
        key,
        `${issue.message.startsWith('must') ? issue.message : 'has the wrong type'} (got ${describe(got)})`,
      );
    case 'custom':
    case 'invalid_format':
    case 'invalid_element':
    case 'invalid_key':
    case 'not_multiple_of':
    case 'too_big':
    case 'too_small':
      return new ConfigError(
        key,
        issue.message.startsWith('must') ? issue.message : `${issue.message} (got ${describe(got)})`,
      );
  }
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function decodeKeys(keys: readonly { id: string; key: string }[], field: string): SymmetricKey[] {
  const seen = new Set<string>();
  return keys.map((entry, index) => {
    if (seen.has(entry.id))
      throw new ConfigError(`${field}.${index}.id`, `repeats key id "${entry.id}": key ids must be unique`);
    seen.add(entry.id);
    return { id: entry.id, key: Buffer.from(entry.key, 'base64') };
  });
}

function resolveConfig(parsed: ParsedConfig, warnings: string[], env: NodeJS.ProcessEnv): BrokerConfig {
  const enduser = parsed.server.enduser;
  const consentUiUrl = enduser.consent_ui_url ?? enduser.public_url;
  const allowedOrigins = enduser.cors.allowed_origins ?? [new URL(consentUiUrl).origin];

  if (parsed.storage.backend === 'postgres' && parsed.storage.postgres.connection_url === undefined) {
    throw new ConfigError(
      'storage.postgres.connection_url',
      'is required when storage.backend is postgres (e.g. postgres://broker:secret@db:5432/broker)',
    );
  }

  if (parsed.oauth2_authorization_server.mode !== 'local') {
    const proxy = parsed.oauth2_authorization_server.proxy;
    for (const key of ['upstream_authorize_endpoint', 'upstream_token_endpoint', 'upstream_jwks_uri'] as const) {
      if (proxy[key] === undefined) {
        throw new ConfigError(
          `oauth2_authorization_server.proxy.${key}`,
          `is required when oauth2_authorization_server.mode is ${parsed.oauth2_authorization_server.mode} (the upstream authorization server's endpoint)`,
        );
      }
    }
  }

  checkCiba(parsed.oauth2_authorization_server.ciba, parsed.oauth2_authorization_server.mode);
  checkImpersonation(parsed.oauth2_authorization_server.impersonation, parsed.oauth2_authorization_server.mode);
  checkEnterprise(parsed.oauth2_authorization_server.enterprise, parsed.oauth2_authorization_server.mode);
  const workers = resolveWorkers(parsed);
  const tracing = resolveTracing(parsed.telemetry.tracing, env);
  checkDevelopmentPrincipal(parsed, warnings);
  checkGatewayTrust(parsed, warnings);

  let encryptionKeys = decodeKeys(parsed.encryption.keys, 'encryption.keys');
  let currentKeyId = parsed.encryption.current_key_id;
  let jweKeys = decodeKeys(parsed.third_party_oauth2.jwe_keys, 'third_party_oauth2.jwe_keys');
  const developmentKeys: DevelopmentKeyName[] = [];
  if (encryptionKeys.length === 0 || jweKeys.length === 0) {
    if (encryptionKeys.length === 0 && currentKeyId !== undefined) {
      throw new ConfigError(
        'encryption.current_key_id',
        `names "${currentKeyId}" but encryption.keys is empty: add the key`,
      );
    }
    const file = parsed.development.keys_file;
    const { keys, created } = loadOrCreateDevelopmentKeys(file);
    const missing: DevelopmentKeyName[] = [];
    if (encryptionKeys.length === 0) {
      encryptionKeys = decodeKeys([keys.encryption_key], 'encryption.keys');
      currentKeyId = keys.encryption_key.id;
      missing.push('encryption.keys');
    }
    if (jweKeys.length === 0) {
      jweKeys = decodeKeys([keys.jwe_key], 'third_party_oauth2.jwe_keys');
      missing.push('third_party_oauth2.jwe_keys');
    }
    developmentKeys.push(...missing);
    warnings.push(
      `!!! DEVELOPMENT KEYS IN USE: ${missing.join(' and ')} not configured; ${created ? 'generated' : 'loaded'} ${resolve(file)} (mode 0600). ` +
        'Production MUST configure its own keys: anyone holding this file can decrypt the token vault. !!!',
    );
  }
  if (currentKeyId === undefined) {
    if (encryptionKeys.length === 1) currentKeyId = (encryptionKeys[0] as SymmetricKey).id;
    else
      throw new ConfigError(
        'encryption.current_key_id',
        'is required when encryption.keys holds more than one key: name the key new secrets are encrypted with',
      );
  }
  if (!encryptionKeys.some((key) => key.id === currentKeyId)) {
    throw new ConfigError(
      'encryption.current_key_id',
      `names "${currentKeyId}" which is not in encryption.keys: add that key or pick one of ${encryptionKeys.map((k) => k.id).join(', ')}`,
    );
  }

  return {
    ...parsed,
    server: {
      ...parsed.server,
      enduser: {
        ...enduser,
        consent_ui_url: consentUiUrl,
        cors: { allowed_origins: allowedOrigins.map((o) => new URL(o).origin) },
      },
      workers,
    },
    telemetry: { ...parsed.telemetry, tracing },
    encryption: { keys: encryptionKeys, current_key_id: currentKeyId },
    third_party_oauth2: { ...parsed.third_party_oauth2, jwe_keys: jweKeys },
    development: { ...parsed.development, keys_in_use: developmentKeys },
  };
}

/**
 * `server.workers` as a number of processes (`auto` = the cores this process may use). One embedded
 * database cannot be shared between processes, so anything but 1 needs PostgreSQL.
 */
function resolveWorkers(parsed: ParsedConfig): number {
  const written = parsed.server.workers;
  if (written !== 1 && parsed.storage.backend === 'pglite') {
    throw new ConfigError(
      'server.workers',
      `must be 1 with storage.backend pglite (got ${JSON.stringify(written)}): one embedded database cannot be shared between processes; use storage.backend postgres to run several workers`,
    );
  }
  return written === 'auto' ? availableParallelism() : written;
}

/** `k1=v1,k2=v2` (OTEL_EXPORTER_OTLP_HEADERS), values percent-decoded; malformed pairs are skipped. */
function otlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      headers[pair.slice(0, at).trim().toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // A value that is not valid percent-encoding is not sent.
    }
  }
  return headers;
}

/**
 * The tracing settings with the standard OpenTelemetry variables applied where the file is silent
 * (endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; headers; service name).
 */
function resolveTracing(tracing: ParsedConfig['telemetry']['tracing'], env: NodeJS.ProcessEnv) {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const endpoint =
    tracing.endpoint ??
    (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || undefined) ??
    (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (tracing.enabled && endpoint === undefined) {
    throw new ConfigError(
      'telemetry.tracing.endpoint',
      'is required when telemetry.tracing.enabled is true (the OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces), or set OTEL_EXPORTER_OTLP_ENDPOINT',
    );
  }
  if (endpoint !== undefined && !/^https?:\/\/[^/]/.test(endpoint))
    throw new ConfigError('telemetry.tracing.endpoint', `must be an http(s) URL (got ${describe(endpoint)})`);
  const headers = {
    ...otlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...otlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
    ...tracing.headers,
  };
  const serviceName = tracing.service_name ?? (env.OTEL_SERVICE_NAME?.trim() || 'agent-identity-broker');
  return { ...tracing, endpoint, headers, service_name: serviceName };
}

/** Loopback listeners only: a name, `localhost`, 127.0.0.0/8 or ::1 (an IPv4-mapped loopback too). */
function isLoopbackBind(bind: string): boolean {
  const host = bind.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  const v4 = host.startsWith('::ffff:') ? host.slice(7) : host;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * `development.principal` lets anyone who reaches the end-user server act as that person, so it is
 * refused unless the server listens on loopback only, and announced loudly on every start.
 */
function checkDevelopmentPrincipal(parsed: ParsedConfig, warnings: string[]): void {
  const principal = parsed.development.principal;
  if (principal === undefined) return;
  const bind = parsed.server.enduser.bind;
  if (!isLoopbackBind(bind)) {
    throw new ConfigError(
      'development.principal',
      `is only allowed when server.enduser.bind is a loopback address (got ${JSON.stringify(bind)}): remove development.principal or bind to 127.0.0.1`,
    );
  }
  warnings.push(
    `!!! DEVELOPMENT PRINCIPAL IN USE: every request to the end-user server without a principal header or session cookie acts as ${JSON.stringify(principal)} (development.principal). ` +
      'Never set it where an SSO proxy should authenticate people. !!!',
  );
}

/**
 * A loud warning when nothing but the token's audience tells the gateway from a person: the
 * exchange's (or the approval sync's) authorization expression admits every assertion and
 * the subject tokens' audiences overlap the assertions'. The broker still refuses a
 * person's token for an agent as the gateway, but any other token of the issuer addressed
 * to the broker (a service account's, an app's) would pass. docs/security.md "Deployment checklist".
 */
function checkGatewayTrust(parsed: ParsedConfig, warnings: string[]): void {
  const exchange = parsed.token_exchange;
  if (exchange.client_assertion.issuer_uri === undefined) return;
  const admitsAll = [
    ['token_exchange.authorization.cel.expression', exchange.authorization.cel.expression],
    ['approvals.sync.authorization.cel.expression', parsed.approvals.sync.authorization.cel.expression],
  ]
    .filter(([, expression]) => (expression as string).trim() === 'true')
    .map(([key]) => key as string);
  if (admitsAll.length === 0) return;
  const brokerIssuer = parsed.oauth2_authorization_server.local.issuer_uri ?? parsed.server.enduser.public_url;
  const assertionAudiences = exchange.client_assertion.audience ?? [brokerIssuer];
  const subjectAudiences = exchange.subject_token.audience ?? assertionAudiences;
  if (!subjectAudiences.some((audience) => assertionAudiences.includes(audience))) return;
  warnings.push(
    `!!! GATEWAY NOT PINNED: ${admitsAll.join(' and ')} ${admitsAll.length === 1 ? 'is' : 'are'} "true" and token_exchange.subject_token.audience overlaps ` +
      "token_exchange.client_assertion.audience, so any token of the gateway's issuer addressed to the broker that is not a person's token for an agent " +
      'authenticates as the gateway. Name the gateway, e.g. \'client_assertion.sub in ["gateway"]\' (docs/security.md "Deployment checklist"). !!!',
  );
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value) && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** CIBA (docs/ciba.md) issues the broker's own tokens: not in proxy mode; the default expiry within the maximum. */
function checkCiba(ciba: ParsedConfig['oauth2_authorization_server']['ciba'], mode: string): void {
  if (!ciba.enabled) return;
  if (mode === 'proxy')
    throw new ConfigError(
      'oauth2_authorization_server.ciba.enabled',
      'CIBA needs local or hybrid mode (mode is proxy)',
    );
  if (ciba.default_expiry > ciba.max_expiry)
    throw new ConfigError('oauth2_authorization_server.ciba.default_expiry', 'must be at most ciba.max_expiry');
}
