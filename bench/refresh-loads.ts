import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { benchUsers, count, seconds, USERS } from './deployment';
import type { BrokerDeployment } from './exchange-deployment';
import {
  DURATION_SECONDS,
  EXCHANGE_RESOURCE,
  FORM_HEADERS,
  FRESH_RATE_CEILING,
  WARMUP_SECONDS,
  type Measurement,
} from './load';

/** The redirect URI registered for the refresh agent (never followed: the code is read from the Location header). */
const REDIRECT_URI = 'https://bench-agent.example.com/callback';
/** Requests in flight at once while seeding (outside every measurement). */
const SEEDING_CONCURRENCY = 32;

/** What a sign-in or a refresh bought: an access token naming its family (`sid`) and the family's current refresh token. */
interface Tokens {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** Values handed out once each, run after run; sized for 1.5x the fastest run so far (at least FRESH_RATE_CEILING). */
class SpentOnce {
  values: string[] = [];
  private fastestRps = 0;

  /** How many the next run may spend at most, warm-up included, that are not there yet. */
  missing(): number {
    const wanted = Math.ceil(Math.max(FRESH_RATE_CEILING, 1.5 * this.fastestRps) * (WARMUP_SECONDS + DURATION_SECONDS));
    return Math.max(0, wanted - this.values.length);
  }

  spend(run: Measurement): void {
    this.values = this.values.slice(run.spent);
    this.fastestRps = Math.max(this.fastestRps, run.rps);
  }
}

/**
 * The refresh token grant and RFC 7662 introspection on one deployment, for a comparison of
 * builds (compare.against.ts): an agent of its own (confidential, redirect URI registered,
 * `read` and `offline_access` allowed, the bench permission set), granted by the dataset's
 * 1,000 bench users through the consent API, and one refresh token family per user started
 * through the build's own authorization code grant (RFC 6749 §4.1 with PKCE, RFC 7636;
 * `resource` the bench service's protected resource, RFC 8707), so that each build stores its
 * families as it does in production, whatever its schema. The agent authenticates with
 * client_secret_basic (RFC 6749 §2.3.1) everywhere.
 *
 * The runs need tens of thousands of families, and a sign-in costs two requests and several
 * writes, so more are cloned from those 1,000 in SQL: every column of the template's token
 * row but its id, family and digest, and likewise the family's row in `refresh_token_families`
 * where the schema has that table (migration 1764200000000 on; `RefreshTokenRepository.issue`
 * writes both). Each clone is then refreshed once through the token endpoint, before any
 * run: that buys the access token (with its `sid`) a first-time introspection spends, and a
 * successor, the build's own output, which a refresh run presents.
 *
 * - refresh: each request presents a current refresh token never presented before (each is
 *   single use: a second presentation is a reuse and ends its family).
 * - refresh-token introspection: the 1,000 sign-ins' refresh tokens, never presented to the
 *   token endpoint, cycled.
 * - access-token introspection: the same sign-ins' access tokens (with their `sid` family),
 *   cycled; after the warm-up their facts are served from memory (`TokenStateCache`).
 * - access-token introspection, first time: each request an access token never introspected
 *   before, so its signature is checked and its facts are read from the database.
 */
export class RefreshLoads {
  /** Headers of every request: a form body and the agent's client_secret_basic credentials. */
  readonly headers: Readonly<Record<string, string>>;
  /** Refresh-token introspection bodies (the 1,000 sign-ins' refresh tokens, cycled). */
  refreshIntrospections: readonly string[] = [];
  /** Access-token introspection bodies (the same sign-ins' access tokens, cycled). */
  accessIntrospections: readonly string[] = [];
  private readonly refreshTokens = new SpentOnce();
  private readonly accessTokens = new SpentOnce();
  /** The sign-ins' families, cloned in turn. */
  private templates: readonly string[] = [];
  private clones = 0;
  private seedingNs = 0n;

  private constructor(
    private readonly deployment: BrokerDeployment,
    readonly agentId: string,
    secret: string,
  ) {
    // RFC 6749 §2.3.1: both form-encoded, then Basic.
    const basic = Buffer.from(`${encodeURIComponent(agentId)}:${encodeURIComponent(secret)}`).toString('base64');
    this.headers = { ...FORM_HEADERS, authorization: `Basic ${basic}` };
  }

  /** The agent, its secret, the users' grants and their sign-ins (the cycled introspection loads and the templates). */
  static async prepare(deployment: BrokerDeployment): Promise<RefreshLoads> {
    const started = process.hrtime.bigint();
    const { serviceId, permissionSetId } = deployment.registry;
    const { id: agentId } = await deployment.adminPost<{ id: string }>('/api/agents', {
      display_name: 'Bench refresh agent',
      redirect_uris: [REDIRECT_URI],
      allowed_scopes: ['read', 'offline_access'],
      permission_sets: [{ permission_set_id: permissionSetId }],
    });
    const { client_secret: secret } = await deployment.adminPost<{ client_secret: string }>(
      `/api/agents/${agentId}/client-credentials`,
      {},
    );
    const users = benchUsers(deployment.dataset);
    await inParallel(users.length, async (i) => {
      const response = await fetch(`${deployment.broker.enduserUrl}/api/consent/agents/${agentId}/grants`, {
        method: 'POST',
        headers: { 'x-remote-user': users[i] as string, 'content-type': 'application/json' },
        body: JSON.stringify({ granted_permission_sets: { [permissionSetId]: [serviceId] } }),
      });
      if (!response.ok) throw new Error(`grant of ${users[i]}: ${response.status} ${await response.text()}`);
    });
    const loads = new RefreshLoads(deployment, agentId, secret);
    const signIns: Tokens[] = [];
    await inParallel(users.length, async (i) => {
      signIns[i] = await loads.signIn(users[i] as string);
    });
    loads.refreshIntrospections = signIns.map(({ refreshToken }) => introspection(refreshToken, 'refresh_token'));
    loads.accessIntrospections = signIns.map(({ accessToken }) => introspection(accessToken, 'access_token'));
    loads.templates = await loads.database(async (db) => {
      const { rows } = await db.query<{ family_id: string }>(
        'SELECT family_id FROM refresh_tokens WHERE token_sha256 = ANY($1::bytea[])',
        [signIns.map(({ refreshToken }) => sha256(refreshToken))],
      );
      return rows.map((row) => row.family_id);
    });
    if (loads.templates.length !== users.length)
      throw new Error(`${count(users.length)} sign-ins stored ${count(loads.templates.length)} refresh tokens`);
    await loads.expectActive();
    loads.seedingNs = process.hrtime.bigint() - started;
    return loads;
  }

  /** Seeds what the next run of either pool may spend and is not there yet. */
  async ready(): Promise<void> {
    await this.topUp(Math.max(this.refreshTokens.missing(), this.accessTokens.missing()));
  }

  /** Refresh bodies for the next run, each a current token never presented; seeds what is missing first. */
  async refreshBodies(): Promise<string[]> {
    await this.ready();
    return this.refreshTokens.values.map((value) =>
      new URLSearchParams({ grant_type: 'refresh_token', refresh_token: value }).toString(),
    );
  }

  spentRefresh(run: Measurement): void {
    this.refreshTokens.spend(run);
  }

  /** Introspection bodies for the next run, each an access token never introspected; seeds what is missing first. */
  async firstIntrospectionBodies(): Promise<string[]> {
    await this.ready();
    return this.accessTokens.values.map((value) => introspection(value, 'access_token'));
  }

  spentFirstIntrospection(run: Measurement): void {
    this.accessTokens.spend(run);
  }

  summary(): string {
    return `${count(USERS)} sign-ins through the authorization code grant, ${count(this.clones)} families cloned from them and refreshed once (${(Number(this.seedingNs) / 1e9).toFixed(1)} s in all, between runs); unspent: ${count(this.refreshTokens.values.length)} refresh tokens, ${count(this.accessTokens.values.length)} access tokens`;
  }

  /**
   * `n` more families, cloned and refreshed once each (their successors and access tokens join
   * the pools), then VACUUM ANALYZE and CHECKPOINT, so that no run pays for these writes.
   */
  private async topUp(n: number): Promise<void> {
    if (n === 0) return;
    const started = process.hrtime.bigint();
    const values = await this.cloneFamilies(n);
    const refreshed: Tokens[] = [];
    await inParallel(n, async (i) => {
      refreshed[i] = await this.tokens(
        new URLSearchParams({ grant_type: 'refresh_token', refresh_token: values[i] as string }),
        'a refresh of a cloned family',
      );
    });
    for (const { accessToken, refreshToken } of refreshed) {
      this.refreshTokens.values.push(refreshToken);
      this.accessTokens.values.push(accessToken);
    }
    await this.database(async (db) => {
      await db.query('VACUUM ANALYZE');
      await db.query('CHECKPOINT');
    });
    this.seedingNs += process.hrtime.bigint() - started;
    console.log(
      `${this.deployment.broker.enduserUrl}: ${count(n)} refresh token families cloned and refreshed in ${seconds(started)} s`,
    );
  }

  /** `n` new families cloned from the templates in turn (see the class comment); their tokens' values. */
  private cloneFamilies(n: number): Promise<string[]> {
    const values = Array.from({ length: n }, () => randomBytes(32).toString('base64url'));
    const families = values.map(() => randomUUID());
    const templates = values.map((_, i) => this.templates[(this.clones + i) % this.templates.length] as string);
    this.clones += n;
    return this.database(async (db) => {
      const { rows } = await db.query<{ present: boolean }>(
        "SELECT to_regclass('refresh_token_families') IS NOT NULL AS present",
      );
      await db.query('BEGIN');
      if (rows[0]?.present === true)
        await db.query(
          `INSERT INTO refresh_token_families
           SELECT (jsonb_populate_record(f, jsonb_build_object('id', n.family_id))).*
             FROM unnest($1::uuid[], $2::uuid[]) AS n(family_id, template)
             JOIN refresh_token_families f ON f.id = n.template`,
          [families, templates],
        );
      // bytea in JSON: its text form, which jsonb_populate_record reads back.
      const inserted = await db.query(
        `INSERT INTO refresh_tokens
         SELECT (jsonb_populate_record(r, jsonb_build_object(
                   'id', gen_random_uuid(), 'family_id', n.family_id, 'token_sha256', n.token_sha256::text))).*
           FROM unnest($1::uuid[], $2::bytea[], $3::uuid[]) AS n(family_id, token_sha256, template)
           JOIN refresh_tokens r ON r.family_id = n.template`,
        [families, values.map(sha256), templates],
      );
      if (inserted.rowCount !== n) throw new Error(`cloning ${count(n)} families inserted ${inserted.rowCount} tokens`);
      await db.query('COMMIT');
      return values;
    });
  }

  /** Runs `work` on a connection of its own to the deployment's database. */
  private async database<T>(work: (db: Client) => Promise<T>): Promise<T> {
    const db = new Client({ connectionString: this.deployment.db.databaseUrl });
    await db.connect();
    try {
      return await work(db);
    } finally {
      await db.end();
    }
  }

  /** One sign-in of `user` through the authorization code grant with PKCE (their grant exists: no consent page). */
  private async signIn(user: string): Promise<Tokens> {
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const authorize = new URL(`${this.deployment.broker.enduserUrl}/oauth2/authorize`);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: this.agentId,
      redirect_uri: REDIRECT_URI,
      scope: 'read offline_access',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      resource: EXCHANGE_RESOURCE,
    }))
      authorize.searchParams.set(name, value);
    const redirect = await fetch(authorize, { headers: { 'x-remote-user': user }, redirect: 'manual' });
    await redirect.arrayBuffer();
    const location = redirect.headers.get('location');
    const answer = location === null ? undefined : new URL(location);
    const code = answer?.searchParams.get('code');
    if (redirect.status !== 302 || answer?.searchParams.get('state') !== state || code == null)
      throw new Error(`authorization request for ${user}: ${redirect.status} ${location ?? '(no Location)'}`);
    return this.tokens(
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      }),
      `the authorization code grant for ${user}`,
    );
  }

  /** A token request that must answer an access token and a refresh token. */
  private async tokens(form: URLSearchParams, what: string): Promise<Tokens> {
    const response = await fetch(`${this.deployment.broker.enduserUrl}/oauth2/token`, {
      method: 'POST',
      headers: this.headers,
      body: form.toString(),
    });
    const body = await response.text();
    const tokens = (response.status === 200 ? JSON.parse(body) : {}) as {
      access_token?: string;
      refresh_token?: string;
    };
    if (tokens.access_token === undefined || tokens.refresh_token === undefined)
      throw new Error(`${what}: ${response.status} ${body}`);
    return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
  }

  /** Fails unless a refresh token and an access token (naming its family in `sid`) introspect as active. */
  private async expectActive(): Promise<void> {
    const introspect = `${this.deployment.broker.enduserUrl}/oauth2/introspect`;
    for (const [what, body] of [
      ['refresh token', this.refreshIntrospections[0]],
      ['access token', this.accessIntrospections[0]],
    ] as const) {
      const response = await fetch(introspect, { method: 'POST', headers: this.headers, body });
      const answer = await response.text();
      if (response.status !== 200 || (JSON.parse(answer) as { active?: boolean }).active !== true)
        throw new Error(`introspection of a ${what}: ${response.status} ${answer}`);
    }
    const accessToken = new URLSearchParams(this.accessIntrospections[0]).get('token') as string;
    const claims = JSON.parse(Buffer.from(accessToken.split('.')[1] as string, 'base64url').toString()) as {
      sid?: unknown;
    };
    if (typeof claims.sid !== 'string') throw new Error('the access token of a sign-in with offline_access has no sid');
  }
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** An RFC 7662 §2.1 request body (the client authenticates in the Authorization header). */
function introspection(token: string, hint: 'access_token' | 'refresh_token'): string {
  return new URLSearchParams({ token, token_type_hint: hint }).toString();
}

/** Runs `work(0 .. n-1)`, SEEDING_CONCURRENCY at a time; the first failure fails all. */
async function inParallel(n: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) await work(i);
  };
  await Promise.all(Array.from({ length: Math.min(SEEDING_CONCURRENCY, n) }, worker));
}
