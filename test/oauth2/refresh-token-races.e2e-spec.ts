import {
  ApiClient,
  createPostgresDatabase,
  freePort,
  FrozenClock,
  http,
  postgresServerUrl,
  startTestBroker,
  type TestBroker,
} from '@broker/testing';
import * as oauth from 'oauth4webapi';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const MAIL = 'https://mail.example.com/mcp';
const insecure = { [oauth.allowInsecureRequests]: true };

/**
 * An end of a refresh token family racing a rotation of one of its tokens, on two broker
 * replicas sharing one PostgreSQL (docs/security.md "Tokens"). The rotation is held inside its
 * transaction deterministically: a second database session holds the person's grant row FOR
 * UPDATE, and the rotation's insert of the successor (whose grant it must lock FOR KEY SHARE)
 * waits for it, after the presented token is already marked rotated. The end of the family
 * runs on the other replica meanwhile; then the session lets go. Whatever the order the
 * database settles them in, the successor must not outlive the end of its family.
 */
describe.runIf(postgresServerUrl())('refresh token families ended while a rotation is in flight (two replicas)', () => {
  const clock = new FrozenClock(new Date());
  let a: TestBroker;
  let b: TestBroker;
  let aUrl: string;
  let bUrl: string;
  let connection: string;
  let agent: { id: string; secret: string };
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    connection = await createPostgresDatabase();
    const port = await freePort();
    aUrl = `http://127.0.0.1:${port}`;
    const start = (enduserPort: number) =>
      startTestBroker({
        servers: BOTH_SERVERS,
        clock,
        config: {
          storage: { backend: 'postgres', postgres: { connection_url: connection } },
          server: { enduser: { port: enduserPort, public_url: aUrl } },
        },
      });
    a = await start(port);
    const bPort = await freePort();
    b = await start(bPort);
    bUrl = `http://127.0.0.1:${bPort}`;
    const admin = new ApiClient(a.url('admin'));
    const serviceId = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'm',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: [MAIL],
      })
    ).json<{ id: string }>().id;
    const setId = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const id = (
      await admin.post('/api/agents', {
        display_name: 'Agent',
        redirect_uris: [REDIRECT],
        allowed_scopes: ['offline_access'],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    agent = {
      id,
      secret: (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret,
    };
    await new ApiClient(aUrl, ALICE).post(`/api/consent/agents/${id}/grants`, {
      granted_permission_sets: { [setId]: [serviceId] },
    });
    const issuer = new URL(aUrl);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  const basic = (): string =>
    `Basic ${Buffer.from(`${agent.id}:${encodeURIComponent(agent.secret)}`).toString('base64')}`;
  const form = (url: string, path: string, body: Record<string, string>) =>
    http(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic() },
      body: new URLSearchParams(body).toString(),
    });
  const refresh = (url: string, token: string) =>
    form(url, '/oauth2/token', { grant_type: 'refresh_token', refresh_token: token });
  const introspect = async (url: string, token: string) =>
    (await form(url, '/oauth2/introspect', { token })).json<{ active: boolean }>().active;

  /** Alice signs in for the agent with offline_access (her grant exists): the first refresh token of a family. */
  async function signIn(): Promise<string> {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint as string);
    for (const [k, v] of Object.entries({
      client_id: agent.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'offline_access',
      state: 's',
      resource: MAIL,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const redirect = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    const client: oauth.Client = { client_id: agent.id };
    const params = oauth.validateAuthResponse(as, client, new URL(redirect.headers.location as string), 's');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(agent.secret),
        params,
        REDIRECT,
        verifier,
        insecure,
      ),
    );
    return tokens.refresh_token as string;
  }

  /** Waits until `count` sessions of the test database wait for a lock (bounded: a failure, never a hang). */
  async function lockWaiters(session: pg.Client, count: number): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const rows = await session.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if ((rows.rows[0]?.n ?? 0) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`fewer than ${count} sessions ever waited for a lock`);
  }

  /**
   * Rotates `token` on replica A while `end` runs on replica B, the rotation held inside its transaction until `end`
   * has started (and, where it must, waits for the rotation); the rotation's answer.
   */
  async function raced(token: string, end: () => Promise<unknown>, endWaits: boolean) {
    const session = new pg.Client({ connectionString: connection });
    await session.connect();
    try {
      await session.query('BEGIN');
      await session.query('SELECT 1 FROM grants WHERE principal = $1 AND agent_id = $2 FOR UPDATE', [ALICE, agent.id]);
      const rotation = refresh(aUrl, token);
      await lockWaiters(session, 1);
      const ended = end();
      // With the family row locked by the rotation, the end waits for it; without, it would have finished already.
      if (endWaits) await lockWaiters(session, 2);
      else await ended;
      await session.query('COMMIT');
      const [answer] = await Promise.all([rotation, ended]);
      return answer;
    } finally {
      await session.end();
    }
  }

  it('RFC 7009: revoking a refresh token while it is being rotated also ends the successor being inserted', async () => {
    const first = await signIn();
    const rotation = await raced(first, () => form(bUrl, '/oauth2/revoke', { token: first }), true);
    expect(rotation.status).toBe(200);
    const successor = rotation.json<{ refresh_token: string; access_token: string }>();
    expect(await introspect(bUrl, successor.refresh_token)).toBe(false);
    expect(await introspect(aUrl, successor.access_token)).toBe(false);
    expect((await refresh(bUrl, successor.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('RFC 9700 §4.14.2: a replayed old token while the holder rotates ends the holder’s newest token too', async () => {
    const first = await signIn();
    const second = (await refresh(aUrl, first)).json<{ refresh_token: string }>().refresh_token;
    // Past the reuse grace: presenting the first token again is a reuse.
    clock.advance(10_000);
    const rotation = await raced(second, () => refresh(bUrl, first), true);
    expect(rotation.status).toBe(200);
    const newest = rotation.json<{ refresh_token: string }>().refresh_token;
    expect(await introspect(bUrl, newest)).toBe(false);
    expect((await refresh(bUrl, newest)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('the person revoking the grant while a rotation is in flight leaves no live successor', async () => {
    const first = await signIn();
    const alice = new ApiClient(bUrl, ALICE);
    const rotation = await raced(first, () => alice.delete(`/api/consent/agents/${agent.id}/grants`), true);
    const answer = rotation.status === 200 ? rotation.json<{ refresh_token: string }>().refresh_token : undefined;
    if (answer !== undefined) {
      expect(await introspect(aUrl, answer)).toBe(false);
      expect((await refresh(aUrl, answer)).json()).toMatchObject({ error: 'invalid_grant' });
    } else {
      expect(rotation.json()).toMatchObject({ error: 'invalid_grant' });
    }
  });
});
