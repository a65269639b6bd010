import { ASYMMETRIC_ALGORITHMS, isHttpUrl, isResourceIndicatorEntry, normalisePrincipal } from '@broker/domain';
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDuration } from './duration';
import { enterpriseSchema } from './enterprise.schema';
import { impersonationSchema } from './impersonation.schema';
import { oneOrMany } from './one-or-many';

/**
 * The configuration schema: docs/configuration.md with its defaults. Every object is
 * strict, so a misspelt key stops start-up instead of being silently ignored.
 * Durations are written `30s`, `10m`, `1h` and become milliseconds.
 */

const toMilliseconds = (value: string | number, ctx: z.RefinementCtx): number => {
  const ms = parseDuration(value);
  if (ms === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `must be a duration such as 500ms, 30s, 10m or 1h (got ${JSON.stringify(value)})`,
    });
    return z.NEVER;
  }
  return ms;
};

const duration = (fallback: string) => z.union([z.string(), z.number()]).default(fallback).transform(toMilliseconds);

/** A duration that is off (undefined) unless set. */
const optionalDuration = () =>
  z
    .union([z.string(), z.number()])
    .optional()
    .transform((value, ctx) => (value === undefined ? undefined : toMilliseconds(value, ctx)));

const port = (fallback: number) =>
  z.coerce
    .number({ error: 'must be a port number between 0 and 65535' })
    .int('must be a whole port number')
    .min(0, 'must be a port number between 0 and 65535')
    .max(65535, 'must be a port number between 0 and 65535')
    .default(fallback);

const positiveInt = (fallback: number, max: number) =>
  z.coerce
    .number({ error: `must be a whole number between 1 and ${max}` })
    .int(`must be a whole number between 1 and ${max}`)
    .min(1, `must be a whole number between 1 and ${max}`)
    .max(max, `must be a whole number between 1 and ${max}`)
    .default(fallback);

const bool = (fallback: boolean) =>
  z
    .union([z.boolean(), z.enum(['true', 'false'])], { error: 'must be true or false' })
    .default(fallback)
    .transform((value) => value === true || value === 'true');

/** An absolute http(s) URL without credentials; a trailing slash is removed. */
const httpUrl = () =>
  z
    .string({ error: 'must be an absolute http(s) URL' })
    .refine((value) => isHttpUrl(value, { userInfo: false }), {
      message: 'must be an absolute http(s) URL without user info, e.g. https://broker.example.com',
    })
    .transform((value) => value.replace(/\/+$/, ''));

/** An entry of `local.resource_indicators.allowed_resources` (`isResourceIndicatorEntry`: exact URI, or prefix ending in `/`). */
const allowedResource = z.string().refine(isResourceIndicatorEntry, {
  message:
    'must be an absolute URI without fragment or user info; a prefix ends in / and starts with an http(s) origin as written by the URL standard, e.g. https://mcp.example.com/',
});

function isCidr(value: string): boolean {
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

const cidrList = (fallback: string[]) =>
  oneOrMany(
    z.string().refine(isCidr, { message: 'must be a CIDR such as 10.0.0.0/8 or ::1/128' }),
    'must be a CIDR or a list of CIDRs',
  ).default(fallback);

const symmetricKey = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 characters of A-Z a-z 0-9 . _ -'),
  key: z
    .string()
    .refine((value) => /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32, {
      message: 'must be 32 random bytes in base64 (generate one with: openssl rand -base64 32)',
    }),
});

const symmetricKeys = () => oneOrMany(symmetricKey, 'must be a key {id, key} or a list of them').default([]);

const preauth = z
  .strictObject({
    principal_header_name: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name such as X-Remote-User')
      .default('X-Remote-User'),
    trusted_sources: cidrList(['127.0.0.1/32', '::1/128']),
  })
  .prefault({});

const authentication = z.strictObject({ preauth }).prefault({});

const celExpression = (fallback: string) =>
  z.strictObject({ expression: z.string().min(1).default(fallback) }).prefault({});

/** A principal as the SSO proxy names it in the principal header (trimmed, 1-200 characters). */
const principalName = z
  .string({ error: 'must be a principal name such as alice@example.com' })
  .refine((value) => normalisePrincipal(value).ok, {
    message: 'must be a principal name of 1-200 characters without control characters',
  })
  .transform((value) => value.trim());

const principalList = () => oneOrMany(principalName, 'must be a principal or a list of principals');

const LOOPBACK = '127.0.0.1';
const WORKERS = 'must be a number of processes from 1 to 64, or auto';

export const configSchema = z
  .strictObject({
    server: z
      .strictObject({
        enduser: z
          .strictObject({
            port: port(8000),
            bind: z.string().min(1).default(LOOPBACK),
            public_url: httpUrl().default('http://localhost:8000'),
            consent_ui_url: httpUrl().optional(),
            authentication,
            cors: z
              .strictObject({
                allowed_origins: oneOrMany(httpUrl(), 'must be an origin or a list of origins').optional(),
              })
              .prefault({}),
            session: z.strictObject({ ttl: duration('12h') }).prefault({}),
            // The rendered API reference at /docs: for development on the public server (docs/http-api.md "API documents").
            api_docs: z.strictObject({ enabled: z.boolean().default(false) }).prefault({}),
            // The built consent console, served at the consent UI paths when consent_ui_url is public_url.
            console: z.strictObject({ static_dir: z.string().min(1).default('dist/console') }).prefault({}),
          })
          .prefault({}),
        admin: z
          .strictObject({
            port: port(14000),
            bind: z.string().min(1).default(LOOPBACK),
            public_url: httpUrl().default('http://localhost:14000'),
            // Origins besides public_url's whose pages may send unsafe requests (an admin console elsewhere).
            allowed_origins: oneOrMany(httpUrl(), 'must be an origin or a list of origins').default([]),
            authentication,
            // Who may do what on the admin server (docs/admin-api.md "Roles"): `admins` unset lets every principal the
            // proxy passes administer; `viewers` may read everything and change nothing (a viewer listed in both is a viewer).
            authorization: z
              .strictObject({ admins: principalList().optional(), viewers: principalList().default([]) })
              .prefault({}),
            // The rendered API reference at /docs (docs/http-api.md "API documents").
            api_docs: z.strictObject({ enabled: z.boolean().default(true) }).prefault({}),
            // The built admin console, served at / and its page paths (docs/admin-console.md).
            console: z
              .strictObject({
                enabled: bool(true),
                static_dir: z.string().min(1).default('dist/admin-console'),
              })
              .prefault({}),
          })
          .prefault({}),
        shutdown: z.strictObject({ timeout: duration('30s') }).prefault({}),
        // Both servers in this many processes sharing the ports (node:cluster); `auto` = available cores. PostgreSQL only.
        workers: z
          .union([z.literal('auto'), z.coerce.number().int(WORKERS).min(1, WORKERS).max(64, WORKERS)], {
            error: WORKERS,
          })
          .default(1),
      })
      .prefault({}),
    storage: z
      .strictObject({
        backend: z.enum(['pglite', 'postgres']).default('pglite'),
        pglite: z
          .strictObject({
            data_dir: z.string().min(1).default('./data/pglite'),
            // A PGlite data directory dump that seeds a database not created yet (docs/configuration.md).
            initial_data: z.string().min(1).optional(),
          })
          .prefault({}),
        postgres: z
          .strictObject({
            connection_url: z
              .string()
              .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection URL')
              .optional(),
            pool_size: z.coerce.number().int().min(1).max(200).default(10),
          })
          .prefault({}),
        migrations: z.strictObject({ run_on_start: bool(true) }).prefault({}),
      })
      .prefault({}),
    encryption: z
      .strictObject({
        keys: symmetricKeys(),
        current_key_id: z.string().optional(),
      })
      .prefault({}),
    third_party_oauth2: z
      .strictObject({
        jwe_keys: symmetricKeys(),
        state_token_ttl: duration('10m'),
        // Issuer discovery (admin API) refuses special-use addresses unless listed here, as CIMD does.
        discovery: z.strictObject({ allowed_networks: cidrList([]) }).prefault({}),
      })
      .prefault({}),
    oauth2_authorization_server: z
      .strictObject({
        mode: z.enum(['local', 'proxy', 'hybrid']).default('local'),
        local: z
          .strictObject({
            issuer_uri: httpUrl().optional(),
            token_ttl: duration('1h'),
            token_claims_expression: z.string().optional(),
            // RFC 9068 §3: the `aud` of an access token whose request names no `resource` (default: the issuer,
            // docs/oauth2.md "Default audience"). Compared exactly by resource servers: kept as written.
            default_audience: z
              .string()
              .refine(isResourceIndicatorEntry, {
                message:
                  'must be an absolute URI without fragment or user info, e.g. https://broker.example.com (a value ending in / must start with an http(s) origin)',
              })
              .optional(),
            // RFC 8707: which `resource` values may be requested (exact URIs, or prefixes ending in `/`); empty: any https or loopback http URI.
            // `required`: an authorization or token request that names none is `invalid_target` (RFC 8707 §2); off for compatibility.
            resource_indicators: z
              .strictObject({
                allowed_resources: oneOrMany(allowedResource, 'must be a resource URI or a list of them').default([]),
                required: bool(false),
              })
              .prefault({}),
            // Refresh tokens (RFC 6749 §6, rotated on every use): issued on the authorization code grant for `offline_access`.
            // `idle_ttl`: how long an unused token stays valid; `absolute_ttl`: the family's whole life from its first token.
            // `reuse_grace`: how long after its rotation the same client presenting a token again gets the same successor
            // instead of ending the family (docs/oauth2.md "Token lifecycle"); 0 turns it off.
            refresh_tokens: z
              .strictObject({
                enabled: bool(true),
                idle_ttl: duration('7d'),
                absolute_ttl: duration('30d'),
                reuse_grace: duration('5s').refine((ms) => ms <= 60_000, 'must be at most 60s'),
              })
              .prefault({}),
            // DPoP (RFC 9449, docs/oauth2.md "DPoP"): a token request with a valid proof gets a token bound to its key.
            // `required`: the default for agents whose `dpop_bound_access_tokens` is unset. A proof's `iat` is accepted
            // `proof_max_age` into the past (and 5 s ahead); `nonce.required` makes every proof carry a server nonce
            // (RFC 9449 §8), each accepted for at most `nonce.lifetime` on every replica.
            // Signing keys (admin API): the admin overview warns when the current key is older than `rotate_after`.
            signing_keys: z.strictObject({ rotate_after: duration('90d') }).prefault({}),
            dpop: z
              .strictObject({
                enabled: bool(true),
                required: bool(false),
                signing_algorithms: oneOrMany(
                  z.enum(ASYMMETRIC_ALGORITHMS),
                  `must be one or a list of ${ASYMMETRIC_ALGORITHMS.join(', ')}`,
                )
                  .refine((list) => list.length > 0, 'must name at least one algorithm')
                  .default(['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA']),
                proof_max_age: duration('60s'),
                nonce: z.strictObject({ required: bool(false), lifetime: duration('5m') }).prefault({}),
              })
              .prefault({}),
          })
          .prefault({}),
        proxy: z
          .strictObject({
            upstream_issuer_uri: httpUrl().optional(),
            upstream_authorize_endpoint: httpUrl().optional(),
            upstream_token_endpoint: httpUrl().optional(),
            upstream_jwks_uri: httpUrl().optional(),
            upstream_timeout: duration('5s'),
          })
          .prefault({}),
        cimd: z
          .strictObject({
            enabled: bool(false),
            fetch_timeout: duration('1s'),
            max_response_bytes: z.coerce.number().int().min(256).default(5120),
            cache: z
              .strictObject({
                min_ttl: duration('60s'),
                max_ttl: duration('1h'),
                // Least recently used documents are evicted past this many entries.
                max_entries: positiveInt(1000, 1_000_000),
                // How long a failed fetch is remembered (answered without fetching again).
                failure_ttl: duration('30s'),
              })
              .prefault({}),
            // Special-use networks exempt from the SSRF guard (tests only; empty in production).
            allowed_networks: cidrList([]),
            // PEM file of extra trusted CAs for document hosts (private PKI, tests).
            tls_ca_file: z.string().min(1).optional(),
          })
          .prefault({}),
        impersonation: impersonationSchema,
        // OpenID CIBA Core 1.0, poll mode (docs/ciba.md "The endpoint"): off unless enabled; local and hybrid modes only.
        // `login_hint.expression`: CEL over `login_hint` and `client` ({id, name}) naming the person; `interval`: the
        // least time between two polls; `requested_expiry` may ask up to `max_expiry`; `token_ttl`: the token's life.
        ciba: z
          .strictObject({
            enabled: bool(false),
            login_hint: celExpression('login_hint'),
            interval: duration('5s').refine((ms) => ms >= 1000 && ms <= 300_000, 'must be from 1s to 5m'),
            default_expiry: duration('10m').refine((ms) => ms >= 1000, 'must be at least 1s'),
            max_expiry: duration('1h').refine((ms) => ms >= 1000 && ms <= 86_400_000, 'must be from 1s to 24h'),
            token_ttl: duration('2m').refine((ms) => ms >= 1000 && ms <= 3_600_000, 'must be from 1s to 1h'),
          })
          .prefault({}),
        // Identity Assertion JWT Authorization Grants from enterprise IdPs (docs/oauth2.md "Enterprise-managed authorization").
        enterprise: enterpriseSchema,
      })
      .prefault({}),
    token_exchange: z
      .strictObject({
        client_assertion: z
          .strictObject({
            issuer_uri: httpUrl().optional(),
            jwks_uri: httpUrl().optional(),
            audience: oneOrMany(z.string().min(1), 'must be an audience or a list of audiences').optional(),
            // Optional (off by default): refuse an `exp` further ahead than this.
            max_lifetime: optionalDuration(),
            // Optional (off by default): RFC 7523 §3 replay refusal of a `jti` seen before within its lifetime.
            single_use: bool(false),
          })
          .prefault({}),
        subject_token: z
          .strictObject({
            // Default: the client assertion's audience list.
            audience: oneOrMany(z.string().min(1), 'must be an audience or a list of audiences').optional(),
          })
          .prefault({}),
        claim_extraction: z
          .strictObject({
            principal_expression: z.string().min(1).default('subject_token.sub'),
            agent_id_expression: z.string().min(1).default('subject_token.azp'),
          })
          .prefault({}),
        authorization: z.strictObject({ cel: celExpression('true') }).prefault({}),
      })
      .prefault({}),
    approvals: z
      .strictObject({
        pending_ttl: duration('10m'),
        // Per (principal, agent) pair: pending approvals at once, creations per rolling minute.
        rate_limit: z
          .strictObject({
            max_pending_per_pair: positiveInt(50, 100_000),
            max_requests_per_minute: positiveInt(10, 100_000),
          })
          .prefault({}),
        sync: z
          .strictObject({
            default_timeout: duration('30s'),
            authorization: z.strictObject({ cel: celExpression('true') }).prefault({}),
          })
          .prefault({}),
      })
      .prefault({}),
    // Authorization at the moment of need (docs/authorization-requests.md): a refused exchange's link for the person.
    authorization_requests: z
      .strictObject({
        enabled: bool(true),
        expiry: duration('10m').refine((ms) => ms >= 1000, 'must be at least 1s'),
        // Pending requests per person at once; creations per rolling minute per (person, agent).
        rate_limit: z
          .strictObject({
            max_pending_per_principal: positiveInt(20, 100_000),
            max_requests_per_minute: positiveInt(10, 100_000),
          })
          .prefault({}),
      })
      .prefault({}),
    request_context: z
      .strictObject({ trace: z.strictObject({ response_enabled: bool(true) }).prefault({}) })
      .prefault({}),
    // Prometheus metrics (admin /metrics) and OpenTelemetry traces (off by default, nothing loaded when off).
    telemetry: z
      .strictObject({
        metrics: z.strictObject({ enabled: bool(true) }).prefault({}),
        tracing: z
          .strictObject({
            enabled: bool(false),
            // The OTLP/HTTP traces URL (e.g. http://collector:4318/v1/traces); default from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT.
            endpoint: httpUrl().optional(),
            // Extra headers of the export requests (an API key); merged over OTEL_EXPORTER_OTLP_HEADERS / OTEL_EXPORTER_OTLP_TRACES_HEADERS.
            headers: z
              .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name'), z.string())
              .default({}),
            // Share of new traces recorded (0..1); a request continuing a sampled traceparent is recorded whatever this says.
            sampling_ratio: z.coerce.number().min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1').default(1),
            // Default: OTEL_SERVICE_NAME, else agent-identity-broker.
            service_name: z.string().min(1).max(200).optional(),
          })
          .prefault({}),
      })
      .prefault({}),
    // Refresh third-party access tokens before they expire, off the token exchange's path.
    token_refresh: z
      .strictObject({
        proactive: z
          .strictObject({
            enabled: bool(true),
            // Sessions whose access token expires within this window are refreshed.
            window: duration('5m'),
            // How often a process looks for them.
            interval: duration('30s'),
            // Sessions claimed per sweep.
            batch_size: positiveInt(100, 10_000),
            // Provider refreshes at once per process.
            concurrency: positiveInt(4, 64),
          })
          .prefault({}),
      })
      .prefault({}),
    // The activity ledger (business events), its retention, and webhooks.
    events: z
      .strictObject({
        enabled: bool(true),
        // Events older than this are purged in batches by a background job.
        retention: duration('90d'),
        // The hot path's events (token exchange, impersonation) are queued and written in batches.
        queue: z
          .strictObject({
            max_events: positiveInt(10_000, 1_000_000),
            flush_interval: duration('250ms'),
            batch_size: positiveInt(500, 10_000),
          })
          .prefault({}),
        webhooks: z
          .strictObject({
            // Special-use networks (loopback, private, link-local) webhook URLs may reach; none by default.
            allowed_networks: cidrList([]),
            timeout: duration('5s'),
            // A delivery is retried with exponential back-off and jitter for this long, then marked failed.
            retry_for: duration('24h'),
            // Attempts in flight at once per process, and per webhook across every process: one slow or hung
            // receiver holds at most per_webhook_concurrency of them, never the others' turn.
            concurrency: positiveInt(8, 256),
            per_webhook_concurrency: positiveInt(2, 64),
            // Delivered and failed deliveries of events older than this are purged in batches by a background job.
            delivery_retention: duration('7d'),
          })
          .prefault({}),
      })
      .prefault({}),
    log: z
      .strictObject({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
        format: z.enum(['json']).default('json'),
      })
      .prefault({}),
    development: z
      .strictObject({
        keys_file: z.string().min(1).default('./data/development-keys.json'),
        // The person a request to the end-user server acts as when it carries no principal header and
        // no session cookie (no SSO proxy in development). Refused unless server.enduser.bind is loopback.
        principal: principalName.optional(),
      })
      .prefault({}),
  })
  .prefault({});

/** The configuration as parsed by the schema, before cross-field resolution. */
export type ParsedConfig = z.output<typeof configSchema>;
