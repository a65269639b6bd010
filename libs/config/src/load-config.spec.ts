import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error';
import { loadConfig, parseConfig } from './load-config';
import { redactConfig } from './redact-config';

const KEY = Buffer.alloc(32, 7).toString('base64');
const KEYS = {
  encryption: { keys: [{ id: 'k1', key: KEY }] },
  third_party_oauth2: { jwe_keys: [{ id: 'j1', key: KEY }] },
};

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a config error');
}

function writeYaml(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'broker-config-')), 'config.yaml');
  writeFileSync(file, text);
  return file;
}

describe('loadConfig', () => {
  it('applies the documented defaults and freezes the result', () => {
    const { config } = parseConfig(KEYS, {});
    expect(config.server.enduser).toMatchObject({
      port: 8000,
      public_url: 'http://localhost:8000',
      consent_ui_url: 'http://localhost:8000',
    });
    expect(config.server.enduser.authentication.preauth).toEqual({
      principal_header_name: 'X-Remote-User',
      trusted_sources: ['127.0.0.1/32', '::1/128'],
    });
    expect(config.server.admin.port).toBe(14000);
    expect(config.server.shutdown.timeout).toBe(30_000);
    expect(config.storage).toMatchObject({
      backend: 'pglite',
      pglite: { data_dir: './data/pglite' },
      migrations: { run_on_start: true },
    });
    expect(config.oauth2_authorization_server.mode).toBe('local');
    expect(config.third_party_oauth2.state_token_ttl).toBe(600_000);
    expect(config.token_exchange.claim_extraction).toEqual({
      principal_expression: 'subject_token.sub',
      agent_id_expression: 'subject_token.azp',
    });
    expect(config.token_exchange.authorization.cel.expression).toBe('true');
    expect(config.approvals).toMatchObject({ pending_ttl: 600_000, sync: { default_timeout: 30_000 } });
    expect(config.authorization_requests).toEqual({
      enabled: true,
      expiry: 600_000,
      rate_limit: { max_pending_per_principal: 20, max_requests_per_minute: 10 },
    });
    expect(config.request_context.trace.response_enabled).toBe(true);
    expect(config.server.enduser.cors.allowed_origins).toEqual(['http://localhost:8000']);
    expect(Object.isFrozen(config.server.enduser)).toBe(true);
  });

  it('names the key and the fix for a bad enum value', () => {
    expect(configError(() => parseConfig({ ...KEYS, oauth2_authorization_server: { mode: 'lokal' } }, {}))).toBe(
      'config error: oauth2_authorization_server.mode must be one of local, proxy, hybrid (got "lokal")',
    );
  });

  it('rejects unknown keys instead of ignoring them', () => {
    expect(configError(() => parseConfig({ ...KEYS, server: { enduser: { prot: 1 } } }, {}))).toMatch(
      /^config error: server\.enduser\.prot is not a known key/,
    );
  });

  it('rejects a bad port, URL, CIDR and duration with the key named', () => {
    expect(configError(() => parseConfig({ ...KEYS, server: { admin: { port: 70000 } } }, {}))).toMatch(
      /^config error: server\.admin\.port must be a port number/,
    );
    expect(configError(() => parseConfig({ ...KEYS, server: { enduser: { public_url: 'ftp://x' } } }, {}))).toMatch(
      /^config error: server\.enduser\.public_url must be an absolute http\(s\) URL/,
    );
    expect(
      configError(() =>
        parseConfig(
          { ...KEYS, server: { enduser: { authentication: { preauth: { trusted_sources: ['10.0.0.0/33'] } } } } },
          {},
        ),
      ),
    ).toMatch(/^config error: server\.enduser\.authentication\.preauth\.trusted_sources\.0 must be a CIDR/);
    expect(configError(() => parseConfig({ ...KEYS, server: { shutdown: { timeout: 'soon' } } }, {}))).toMatch(
      /^config error: server\.shutdown\.timeout must be a duration/,
    );
  });

  it('validates key material and the current key id', () => {
    expect(
      configError(() => parseConfig({ ...KEYS, encryption: { keys: [{ id: 'k1', key: 'c2hvcnQ=' }] } }, {})),
    ).toMatch(/^config error: encryption\.keys\.0\.key must be 32 random bytes/);
    expect(
      configError(() =>
        parseConfig({ ...KEYS, encryption: { keys: [{ id: 'k1', key: KEY }], current_key_id: 'k9' } }, {}),
      ),
    ).toMatch(/^config error: encryption\.current_key_id names "k9" which is not in encryption\.keys/);
  });

  it('takes a single value wherever a list-valued key has a natural single-value form', () => {
    const file = writeYaml(
      [
        'token_exchange.client_assertion:',
        '  issuer_uri: https://gateway.example.com',
        '  jwks_uri: https://gateway.example.com/jwks',
        '  audience: https://broker.example.com',
        'server.enduser.authentication.preauth.trusted_sources: 10.0.0.0/8',
        'server.admin.authentication.preauth.trusted_sources: ::1/128',
        'server.enduser.cors.allowed_origins: https://console.example.com',
        'oauth2_authorization_server.cimd.allowed_networks: 192.0.2.0/24',
        `encryption.keys: {id: k1, key: "${KEY}"}`,
        `third_party_oauth2.jwe_keys: {id: j1, key: "${KEY}"}`,
        '',
      ].join('\n'),
    );
    const { config } = loadConfig(['--config', file], {});
    expect(config.token_exchange.client_assertion.audience).toEqual(['https://broker.example.com']);
    expect(config.server.enduser.authentication.preauth.trusted_sources).toEqual(['10.0.0.0/8']);
    expect(config.server.admin.authentication.preauth.trusted_sources).toEqual(['::1/128']);
    expect(config.server.enduser.cors.allowed_origins).toEqual(['https://console.example.com']);
    expect(config.oauth2_authorization_server.cimd.allowed_networks).toEqual(['192.0.2.0/24']);
    expect(config.encryption.keys.map((k) => k.id)).toEqual(['k1']);
    expect(config.third_party_oauth2.jwe_keys.map((k) => k.id)).toEqual(['j1']);
    // The list form still works, and a bad single value is named at the key itself.
    expect(
      parseConfig({ ...KEYS, token_exchange: { client_assertion: { audience: ['a', 'b'] } } }, {}).config.token_exchange
        .client_assertion.audience,
    ).toEqual(['a', 'b']);
    expect(
      configError(() =>
        parseConfig(
          { ...KEYS, server: { enduser: { authentication: { preauth: { trusted_sources: '10.0.0.0/33' } } } } },
          {},
        ),
      ),
    ).toBe(
      'config error: server.enduser.authentication.preauth.trusted_sources must be a CIDR such as 10.0.0.0/8 or ::1/128',
    );
    expect(
      configError(() => parseConfig({ ...KEYS, encryption: { keys: { id: 'k1', key: 'c2hvcnQ=' } } }, {})),
    ).toMatch(/^config error: encryption\.keys\.key must be 32 random bytes/);
    expect(
      configError(() => parseConfig({ ...KEYS, token_exchange: { client_assertion: { audience: 42 } } }, {})),
    ).toMatch(/^config error: token_exchange\.client_assertion\.audience must be a string \(got 42\)/);
  });

  it('reads approvals.rate_limit with the defaults 50 pending and 10 a minute, validated', () => {
    expect(parseConfig(KEYS, {}).config.approvals.rate_limit).toEqual({
      max_pending_per_pair: 50,
      max_requests_per_minute: 10,
    });
    expect(
      parseConfig({ ...KEYS, approvals: { rate_limit: { max_pending_per_pair: 5, max_requests_per_minute: '3' } } }, {})
        .config.approvals.rate_limit,
    ).toEqual({
      max_pending_per_pair: 5,
      max_requests_per_minute: 3,
    });
    expect(
      configError(() => parseConfig({ ...KEYS, approvals: { rate_limit: { max_pending_per_pair: 0 } } }, {})),
    ).toBe('config error: approvals.rate_limit.max_pending_per_pair must be a whole number between 1 and 100000');
    expect(
      configError(() => parseConfig({ ...KEYS, approvals: { rate_limit: { max_requests_per_minute: 2.5 } } }, {})),
    ).toBe('config error: approvals.rate_limit.max_requests_per_minute must be an int (got 2.5)');
    expect(configError(() => parseConfig({ ...KEYS, approvals: { rate_limit: { per_minute: 2 } } }, {}))).toMatch(
      /^config error: approvals\.rate_limit\.per_minute is not a known key/,
    );
  });

  it('reads server.workers (a number or auto) and refuses more than one worker on PGlite, naming the key', () => {
    const postgres = { backend: 'postgres', postgres: { connection_url: 'postgres://db/broker' } };
    expect(parseConfig(KEYS, {}).config.server.workers).toBe(1);
    expect(parseConfig({ ...KEYS, storage: postgres, server: { workers: '2' } }, {}).config.server.workers).toBe(2);
    expect(parseConfig({ ...KEYS, storage: postgres, server: { workers: 'auto' } }, {}).config.server.workers).toBe(
      availableParallelism(),
    );
    expect(configError(() => parseConfig({ ...KEYS, server: { workers: 2 } }, {}))).toMatch(
      /^config error: server\.workers must be 1 with storage\.backend pglite/,
    );
    expect(configError(() => parseConfig({ ...KEYS, server: { workers: 'auto' } }, {}))).toMatch(
      /^config error: server\.workers must be 1 with storage\.backend pglite/,
    );
    expect(configError(() => parseConfig({ ...KEYS, storage: postgres, server: { workers: 0 } }, {}))).toMatch(
      /^config error: server\.workers must be a number of processes from 1 to 64, or auto/,
    );
  });

  it('reads telemetry: metrics on and tracing off by default; tracing takes the OTEL_* variables where the file is silent', () => {
    const defaults = parseConfig(KEYS, {}).config.telemetry;
    expect(defaults.metrics.enabled).toBe(true);
    expect(defaults.tracing).toMatchObject({
      enabled: false,
      endpoint: undefined,
      sampling_ratio: 1,
      service_name: 'agent-identity-broker',
      headers: {},
    });
    expect(configError(() => parseConfig({ ...KEYS, telemetry: { tracing: { enabled: true } } }, {}))).toMatch(
      /^config error: telemetry\.tracing\.endpoint is required when telemetry\.tracing\.enabled is true/,
    );
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%20def,bad',
      OTEL_SERVICE_NAME: 'broker-eu',
    };
    const fromEnv = parseConfig({ ...KEYS, telemetry: { tracing: { enabled: true, sampling_ratio: '0.25' } } }, env)
      .config.telemetry.tracing;
    expect(fromEnv).toMatchObject({
      endpoint: 'http://collector:4318/v1/traces',
      headers: { 'x-api-key': 'abc def' },
      service_name: 'broker-eu',
      sampling_ratio: 0.25,
    });
    const traces = parseConfig(
      { ...KEYS, telemetry: { tracing: { enabled: true } } },
      { ...env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/v1/traces' },
    ).config.telemetry.tracing;
    expect(traces.endpoint).toBe('http://traces:4318/v1/traces');
    const file = parseConfig(
      {
        ...KEYS,
        telemetry: {
          tracing: { enabled: true, endpoint: 'http://file:4318/v1/traces', headers: { 'x-api-key': 'file-key' } },
        },
      },
      env,
    ).config.telemetry.tracing;
    expect(file).toMatchObject({ endpoint: 'http://file:4318/v1/traces', headers: { 'x-api-key': 'file-key' } });
    expect(
      JSON.stringify(
        redactConfig(
          parseConfig({ ...KEYS, telemetry: { tracing: { headers: { authorization: 'Bearer otlp-secret' } } } }, {})
            .config,
        ),
      ),
    ).not.toContain('otlp-secret');
    expect(configError(() => parseConfig({ ...KEYS, telemetry: { tracing: { sampling_ratio: 2 } } }, {}))).toMatch(
      /^config error: telemetry\.tracing\.sampling_ratio must be from 0 to 1/,
    );
  });

  it('reads token_refresh.proactive: on by default with a 5 minute window every 30 seconds', () => {
    expect(parseConfig(KEYS, {}).config.token_refresh.proactive).toEqual({
      enabled: true,
      window: 300_000,
      interval: 30_000,
      batch_size: 100,
      concurrency: 4,
    });
    expect(
      parseConfig({ ...KEYS, token_refresh: { proactive: { enabled: false, window: '10m', concurrency: 8 } } }, {})
        .config.token_refresh.proactive,
    ).toMatchObject({ enabled: false, window: 600_000, concurrency: 8 });
    expect(configError(() => parseConfig({ ...KEYS, token_refresh: { proactive: { batch_size: 0 } } }, {}))).toMatch(
      /^config error: token_refresh\.proactive\.batch_size must be a whole number between 1 and 10000/,
    );
  });

  it('reads events: the ledger on, 90 days of retention, a bounded hot-path queue, webhooks to public addresses only', () => {
    expect(parseConfig(KEYS, {}).config.events).toEqual({
      enabled: true,
      retention: 90 * 86_400_000,
      queue: { max_events: 10_000, flush_interval: 250, batch_size: 500 },
      webhooks: {
        allowed_networks: [],
        timeout: 5_000,
        retry_for: 86_400_000,
        concurrency: 8,
        per_webhook_concurrency: 2,
        delivery_retention: 7 * 86_400_000,
      },
    });
    expect(
      parseConfig({ ...KEYS, events: { retention: '30d', webhooks: { allowed_networks: '127.0.0.0/8' } } }, {}).config
        .events,
    ).toMatchObject({ retention: 30 * 86_400_000, webhooks: { allowed_networks: ['127.0.0.0/8'] } });
    expect(configError(() => parseConfig({ ...KEYS, events: { queue: { max_events: 0 } } }, {}))).toMatch(
      /^config error: events\.queue\.max_events must be a whole number between 1 and 1000000/,
    );
    expect(
      parseConfig(
        { ...KEYS, events: { webhooks: { concurrency: 16, per_webhook_concurrency: 1, delivery_retention: '30d' } } },
        {},
      ).config.events.webhooks,
    ).toMatchObject({ concurrency: 16, per_webhook_concurrency: 1, delivery_retention: 30 * 86_400_000 });
    expect(
      configError(() => parseConfig({ ...KEYS, events: { webhooks: { per_webhook_concurrency: 0 } } }, {})),
    ).toMatch(/^config error: events\.webhooks\.per_webhook_concurrency must be a whole number between 1 and 64/);
  });

  it('reads oauth2_authorization_server.local.resource_indicators.required: off by default, validated', () => {
    expect(parseConfig(KEYS, {}).config.oauth2_authorization_server.local.resource_indicators).toEqual({
      allowed_resources: [],
      required: false,
    });
    expect(
      parseConfig(
        { ...KEYS, oauth2_authorization_server: { local: { resource_indicators: { required: 'true' } } } },
        {},
      ).config.oauth2_authorization_server.local.resource_indicators.required,
    ).toBe(true);
    expect(
      configError(() =>
        parseConfig(
          { ...KEYS, oauth2_authorization_server: { local: { resource_indicators: { required: 'yes' } } } },
          {},
        ),
      ),
    ).toMatch(/^config error: oauth2_authorization_server\.local\.resource_indicators\.required must be true or false/);
  });

  it('reads oauth2_authorization_server.local.default_audience: unset by default (the issuer), an absolute URI kept as written', () => {
    const local = (default_audience: unknown) => ({
      ...KEYS,
      oauth2_authorization_server: { local: { default_audience } },
    });
    expect(parseConfig(KEYS, {}).config.oauth2_authorization_server.local.default_audience).toBeUndefined();
    for (const uri of ['https://api.example.com/', 'urn:example:broker-apis'])
      expect(parseConfig(local(uri), {}).config.oauth2_authorization_server.local.default_audience).toBe(uri);
    for (const bad of ['', 'api', 'https://api.example.com/#x', 'https://u:p@api.example.com', 42])
      expect(configError(() => parseConfig(local(bad), {}))).toMatch(
        /^config error: oauth2_authorization_server\.local\.default_audience /,
      );
  });

  it('requires a connection URL for the postgres backend', () => {
    expect(configError(() => parseConfig({ ...KEYS, storage: { backend: 'postgres' } }, {}))).toMatch(
      /^config error: storage\.postgres\.connection_url is required/,
    );
  });

  it('expands ${VAR} and ${VAR:-default} and fails naming an unset variable', () => {
    const file = writeYaml(
      'server:\n  enduser:\n    port: ${PORT}\n    public_url: ${PUBLIC_URL:-https://broker.example.com}\n' +
        `encryption:\n  keys: [{id: k1, key: "${KEY}"}]\nthird_party_oauth2:\n  jwe_keys: [{id: j1, key: "${KEY}"}]\n`,
    );
    const { config } = loadConfig(['--config', file], { PORT: '9001' });
    expect(config.server.enduser.port).toBe(9001);
    expect(config.server.enduser.public_url).toBe('https://broker.example.com');
    expect(configError(() => loadConfig(['--config', file], {}))).toMatch(
      /^config error: server\.enduser\.port references environment variable PORT which is not set/,
    );
  });

  it('reads the file named by IDENTITY_BROKER_CONFIG_PATH and accepts dotted keys', () => {
    const file = writeYaml(
      `server.enduser.port: 8100\nserver.admin.port: 14100\nencryption.keys: [{id: k1, key: "${KEY}"}]\nthird_party_oauth2.jwe_keys: [{id: j1, key: "${KEY}"}]\n`,
    );
    const { config, source } = loadConfig([], { IDENTITY_BROKER_CONFIG_PATH: file });
    expect(source).toBe(file);
    expect(config.server.enduser.port).toBe(8100);
    expect(config.server.admin.port).toBe(14100);
  });

  it('reports a missing or malformed file in one line', () => {
    expect(configError(() => loadConfig(['--config', '/nonexistent/broker.yaml'], {}))).toMatch(
      /^config error: file \/nonexistent\/broker\.yaml cannot be read \(ENOENT\)/,
    );
    expect(configError(() => loadConfig(['--config', writeYaml('server: [\n')], {}))).toMatch(/is not valid YAML/);
  });

  it('generates development keys once, persisted with mode 0600, with a loud warning', () => {
    const keysFile = join(mkdtempSync(join(tmpdir(), 'broker-dev-')), 'data', 'development-keys.json');
    const first = parseConfig({ development: { keys_file: keysFile } }, {});
    expect(first.warnings.join('\n')).toMatch(/DEVELOPMENT KEYS IN USE/);
    expect(statSync(keysFile).mode & 0o777).toBe(0o600);
    expect(first.config.development.keys_in_use).toEqual(['encryption.keys', 'third_party_oauth2.jwe_keys']);
    const second = parseConfig({ development: { keys_file: keysFile } }, {});
    expect(second.config.encryption.keys[0]?.key.equals(first.config.encryption.keys[0]?.key as Buffer)).toBe(true);
    expect(
      second.config.third_party_oauth2.jwe_keys[0]?.key.equals(
        first.config.third_party_oauth2.jwe_keys[0]?.key as Buffer,
      ),
    ).toBe(true);
  });

  it('names no development key when both key sets are configured', () => {
    expect(parseConfig(KEYS, {}).config.development.keys_in_use).toEqual([]);
  });

  it('reads the admin roles (unset admins: everyone; viewers default empty), one principal or a list', () => {
    expect(parseConfig(KEYS, {}).config.server.admin.authorization).toEqual({ viewers: [] });
    const { config } = parseConfig(
      { ...KEYS, 'server.admin.authorization': { admins: ' alice@example.com ', viewers: ['auditor@example.com'] } },
      {},
    );
    expect(config.server.admin.authorization).toEqual({
      admins: ['alice@example.com'],
      viewers: ['auditor@example.com'],
    });
    expect(
      configError(() => parseConfig({ ...KEYS, server: { admin: { authorization: { viewers: [''] } } } }, {})),
    ).toMatch(/^config error: server\.admin\.authorization\.viewers\.0 must be a principal name/);
    expect(
      configError(() => parseConfig({ ...KEYS, server: { admin: { authorization: { owners: [] } } } }, {})),
    ).toMatch(/^config error: server\.admin\.authorization\.owners is not a known key/);
  });

  it('reads the signing key rotation age (default 90 days)', () => {
    expect(parseConfig(KEYS, {}).config.oauth2_authorization_server.local.signing_keys.rotate_after).toBe(
      90 * 86_400_000,
    );
    const { config } = parseConfig(
      { ...KEYS, 'oauth2_authorization_server.local.signing_keys.rotate_after': '30d' },
      {},
    );
    expect(config.oauth2_authorization_server.local.signing_keys.rotate_after).toBe(30 * 86_400_000);
  });

  it('redacts key material and connection passwords when the config is logged', () => {
    const { config } = parseConfig(
      {
        ...KEYS,
        storage: { backend: 'postgres', postgres: { connection_url: 'postgres://broker:s3cret-pw@db:5432/broker' } },
      },
      {},
    );
    const text = JSON.stringify(redactConfig(config));
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('s3cret-pw');
    expect(text).toContain('token_exchange');
  });
});

describe('shipped example configs', () => {
  const env = { BROKER_KEK_1: KEY, BROKER_JWE_KEY_1: KEY, BROKER_DATABASE_URL: 'postgres://broker:pw@db:5432/broker' };

  it('examples/config/broker.yaml is valid', () => {
    const { config } = loadConfig(['--config', 'examples/config/broker.yaml'], env);
    expect(config.storage.backend).toBe('postgres');
    expect(config.server.enduser.authentication.preauth.trusted_sources).toEqual(['10.0.0.0/8']);
    expect(config.oauth2_authorization_server.local.resource_indicators.required).toBe(true);
  });

  it('docker/broker.compose.yaml is valid', () => {
    const { config } = loadConfig(['--config', 'docker/broker.compose.yaml'], env);
    expect(config.server.admin.bind).toBe('0.0.0.0');
  });
});

describe('gateway trust warning', () => {
  const anchor = { issuer_uri: 'https://gateway.example.com', jwks_uri: 'https://gateway.example.com/jwks' };
  const warningsOf = (tree: Record<string, unknown>): string =>
    parseConfig({ ...KEYS, ...tree }, {}).warnings.join('\n');

  it('warns, naming both keys and the checklist, when an expression admits everyone and the audiences overlap (the defaults)', () => {
    const text = warningsOf({ token_exchange: { client_assertion: anchor } });
    expect(text).toMatch(/GATEWAY NOT PINNED/);
    expect(text).toContain(
      'token_exchange.authorization.cel.expression and approvals.sync.authorization.cel.expression are "true"',
    );
    expect(text).toContain('token_exchange.subject_token.audience overlaps token_exchange.client_assertion.audience');
    expect(text).toContain('Deployment checklist');
    expect(
      warningsOf({
        token_exchange: {
          client_assertion: { ...anchor, audience: ['a', 'b'] },
          subject_token: { audience: ['b', 'c'] },
        },
      }),
    ).toMatch(/GATEWAY NOT PINNED/);
  });

  it('names only the expression that admits everyone', () => {
    const text = warningsOf({
      token_exchange: { client_assertion: anchor },
      approvals: { sync: { authorization: { cel: { expression: 'client_assertion.sub == "gw"' } } } },
    });
    expect(text).toContain('token_exchange.authorization.cel.expression is "true"');
    expect(text).not.toContain('approvals.sync.authorization.cel.expression');
  });

  it('stays quiet when both expressions name the gateway, when the audiences are distinct, or with no trust anchor', () => {
    const pinned = { cel: { expression: 'client_assertion.sub in ["gateway"]' } };
    expect(
      warningsOf({
        token_exchange: { client_assertion: anchor, authorization: pinned },
        approvals: { sync: { authorization: pinned } },
      }),
    ).not.toMatch(/GATEWAY NOT PINNED/);
    expect(
      warningsOf({
        token_exchange: { client_assertion: anchor, subject_token: { audience: 'https://mcp.example.com' } },
      }),
    ).not.toMatch(/GATEWAY NOT PINNED/);
    expect(warningsOf({})).not.toMatch(/GATEWAY NOT PINNED/);
  });
});

describe('oauth2_authorization_server.ciba', () => {
  const PROXY = {
    mode: 'proxy',
    proxy: {
      upstream_authorize_endpoint: 'https://idp.example.com/authorize',
      upstream_token_endpoint: 'https://idp.example.com/token',
      upstream_jwks_uri: 'https://idp.example.com/jwks',
    },
  };

  it('is off by default, with the documented interval, expiries, token lifetime and hint expression', () => {
    expect(parseConfig(KEYS, {}).config.oauth2_authorization_server.ciba).toEqual({
      enabled: false,
      login_hint: { expression: 'login_hint' },
      interval: 5000,
      default_expiry: 600_000,
      max_expiry: 3_600_000,
      token_ttl: 120_000,
    });
  });

  it('stops start-up when enabled in proxy mode, naming the key', () => {
    expect(
      configError(() =>
        parseConfig({ ...KEYS, oauth2_authorization_server: { ...PROXY, ciba: { enabled: true } } }, {}),
      ),
    ).toBe('config error: oauth2_authorization_server.ciba.enabled CIBA needs local or hybrid mode (mode is proxy)');
    // Disabled, the section is inert in proxy mode.
    expect(
      parseConfig({ ...KEYS, oauth2_authorization_server: PROXY }, {}).config.oauth2_authorization_server.mode,
    ).toBe('proxy');
    expect(
      parseConfig({ ...KEYS, oauth2_authorization_server: { ...PROXY, mode: 'hybrid', ciba: { enabled: true } } }, {})
        .config.oauth2_authorization_server.ciba.enabled,
    ).toBe(true);
  });

  it('refuses a default expiry beyond the maximum, and an interval under a second', () => {
    expect(
      configError(() =>
        parseConfig({ ...KEYS, oauth2_authorization_server: { ciba: { enabled: true, default_expiry: '2h' } } }, {}),
      ),
    ).toBe('config error: oauth2_authorization_server.ciba.default_expiry must be at most ciba.max_expiry');
    expect(
      configError(() => parseConfig({ ...KEYS, oauth2_authorization_server: { ciba: { interval: '500ms' } } }, {})),
    ).toBe('config error: oauth2_authorization_server.ciba.interval must be from 1s to 5m');
  });
});
