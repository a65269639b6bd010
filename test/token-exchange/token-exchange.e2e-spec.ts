import { randomUUID } from 'node:crypto';
import {
  ApiClient,
  BrokerProcess,
  freePort,
  http,
  startGatewayFixture,
  startJwtIssuer,
  startTestBroker,
  testBackends,
  testConfigTree,
  testKey,
  writeConfigFile,
  type GatewayFixture,
  type SignOptions,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import { TokenVault } from '@broker/vault';
import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const ALICE = 'alice@example.com';

/** A service, a permission set, an agent, Alice's grant to it and her stored third-party token. */
async function provision(broker: TestBroker, base: string): Promise<{ agent: string; service: string; set: string }> {
  const admin = new ApiClient(broker.url('admin'));
  const service = (
    await admin.post('/api/services', {
      display_name: 'Mail',
      client_id: 'm',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/a',
      token_endpoint: 'https://idp.example.com/t',
      protected_resources: ['https://mail.example.com/api'],
    })
  ).json<{ id: string }>().id;
  const set = (
    await admin.post('/api/permission-sets', {
      name: 'Mail',
      service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
    })
  ).json<{ id: string }>().id;
  const agent = (
    await admin.post('/api/agents', { display_name: 'Agent', permission_sets: [{ permission_set_id: set }] })
  ).json<{ id: string }>().id;
  await new ApiClient(base, ALICE).post(`/api/consent/agents/${agent}/grants`, {
    granted_permission_sets: { [set]: [service] },
  });
  await broker.broker
    .server('enduser')
    .app.get(TokenVault)
    .store(ALICE, service, {
      accessToken: 'third-party-access-token-1234567890',
      tokenType: 'Bearer',
      refreshToken: undefined,
      expiresIn: 3600,
      refreshTokenExpiresIn: undefined,
      scopes: ['mail.read'],
    });
  return { agent, service, set };
}

async function postForm(url: string, fields: Record<string, string | undefined>, headers: Record<string, string> = {}) {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.set(k, v);
  return http(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form.toString(),
  });
}

// The hot path runs on PostgreSQL in production (prepared statements there): both backends.
describe.each(testBackends())('RFC 8693 token exchange (third-party) on $name', (backend) => {
  let gateway: GatewayFixture;
  let issuer: TestJwtIssuer;
  let broker: TestBroker;
  let base: string;
  let agent: string;
  let service: string;
  let set: string;

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      config: { token_exchange: { authorization: { cel: { expression: 'client_assertion.sub == "gateway-1"' } } } },
    });
    ({ broker, base, issuer } = gateway);
    ({ agent, service, set } = await provision(broker, base));
  });

  afterAll(async () => {
    await gateway.stop();
  });

  const assertion = (claims: Record<string, unknown> = {}, options: SignOptions = {}) =>
    gateway.assertion(claims, options);
  // By default a subject token is for the client assertion's audience: the broker's issuer.
  const subjectToken = (claims: Record<string, unknown> = {}, options: SignOptions = {}) =>
    gateway.subjectToken(ALICE, agent, claims, options);

  const exchange = (fields: Record<string, string | undefined>) => postForm(`${base}/oauth2/token`, fields);

  async function valid(overrides: Record<string, string | undefined> = {}) {
    return {
      grant_type: EXCHANGE,
      client_assertion_type: JWT_BEARER,
      client_assertion: await assertion(),
      subject_token: await subjectToken(),
      subject_token_type: ACCESS,
      resource: 'https://mail.example.com/api',
      ...overrides,
    };
  }

  it('returns the stored third-party token exactly as documented', async () => {
    const response = await exchange(await valid());
    expect(response.status, response.text).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json<Record<string, unknown>>();
    expect(body).toMatchObject({
      access_token: 'third-party-access-token-1234567890',
      token_type: 'Bearer',
      issued_token_type: ACCESS,
      scope: 'mail.read',
      granted_permission_sets: { [set]: [service] },
    });
    expect(body.expires_in).toBeGreaterThan(3500);
    expect(body).not.toHaveProperty('data');
  });

  it('returns the stored token as its provider issued it when the request carries a DPoP proof (only what the broker signs is bound)', async () => {
    // Not even a well-formed proof: the third-party exchange never reads the header, so the hot path pays nothing for it.
    const response = await postForm(`${base}/oauth2/token`, await valid(), { dpop: 'not-a-proof' });
    expect(response.status, response.text).toBe(200);
    expect(response.json<Record<string, unknown>>()).toMatchObject({
      access_token: 'third-party-access-token-1234567890',
      token_type: 'Bearer',
    });
  });

  it('matches the resource with a trailing slash and other host case (never a prefix)', async () => {
    expect((await exchange(await valid({ resource: 'https://MAIL.example.com/api/' }))).status).toBe(200);
    expect(
      (await exchange(await valid({ resource: 'https://mail.example.com/api/inbox' }))).json<{ error: string }>().error,
    ).toBe('invalid_target');
  });

  describe('error table', () => {
    const cases: [string, () => Promise<Record<string, string | undefined>>, number, string][] = [
      ['missing subject_token', () => valid({ subject_token: undefined }), 400, 'invalid_request'],
      ['missing client_assertion', () => valid({ client_assertion: undefined }), 400, 'invalid_request'],
      ['missing resource', () => valid({ resource: undefined }), 400, 'invalid_request'],
      ['a malformed subject token', () => valid({ subject_token: 'not.a.jwt' }), 400, 'invalid_request'],
      [
        'a wrong subject_token_type',
        () => valid({ subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' }),
        400,
        'invalid_request',
      ],
      [
        'a subject token without sub',
        async () => valid({ subject_token: await issuer.sign({ azp: agent }, { audience: base }) }),
        400,
        'invalid_request',
      ],
      [
        'a subject token for another API',
        async () => valid({ subject_token: await subjectToken({}, { audience: 'https://calendar-api.example.com' }) }),
        400,
        'invalid_request',
      ],
      [
        'an ID token of another application as the subject token',
        async () =>
          valid({
            subject_token: await subjectToken({ nonce: 'n-1' }, { audience: 'other-app-client-id', typ: 'JWT' }),
          }),
        400,
        'invalid_request',
      ],
      [
        'a subject token without aud',
        async () => valid({ subject_token: await issuer.sign({ sub: ALICE, azp: agent }) }),
        400,
        'invalid_request',
      ],
      [
        'a subject token without exp',
        async () => valid({ subject_token: await subjectToken({}, { ttlSeconds: null }) }),
        400,
        'invalid_request',
      ],
      ['an invalid resource URI', () => valid({ resource: 'mail.example.com' }), 400, 'invalid_request'],
      ['a resource no service owns', () => valid({ resource: 'https://unknown.example.com' }), 400, 'invalid_target'],
      [
        'an expired client assertion',
        async () => valid({ client_assertion: await assertion({}, { ttlSeconds: -120 }) }),
        401,
        'invalid_client',
      ],
      [
        'a client assertion for another audience',
        async () => valid({ client_assertion: await assertion({}, { audience: 'https://elsewhere.example.com' }) }),
        401,
        'invalid_client',
      ],
      [
        'a client assertion issued in the future',
        async () => valid({ client_assertion: await assertion({}, { iat: Math.floor(Date.now() / 1000) + 600 }) }),
        401,
        'invalid_client',
      ],
      [
        'a client assertion without exp',
        async () => valid({ client_assertion: await assertion({}, { ttlSeconds: null }) }),
        401,
        'invalid_client',
      ],
      [
        'an access token (typ at+jwt) for the broker as the client assertion',
        async () => valid({ client_assertion: await assertion({}, { typ: 'at+jwt' }) }),
        401,
        'invalid_client',
      ],
      [
        'an ID token for the broker as the client assertion',
        async () => valid({ client_assertion: await assertion({ nonce: 'n-1', at_hash: 'x' }, { typ: 'JWT' }) }),
        401,
        'invalid_client',
      ],
      [
        'the authorization expression false',
        async () => valid({ client_assertion: await assertion({ sub: 'gateway-2' }) }),
        403,
        'access_denied',
      ],
      [
        'no grant for the agent',
        async () => valid({ subject_token: await subjectToken({ azp: randomUUID() }) }),
        403,
        'access_denied',
      ],
      [
        'no session with the service',
        async () => valid({ subject_token: await subjectToken({ sub: 'bob@example.com' }) }),
        403,
        'access_denied',
      ],
    ];
    for (const [name, fields, status, error] of cases) {
      it(`${name} → ${status} ${error}`, async () => {
        const response = await exchange(await fields());
        expect(response.status, response.text).toBe(status);
        const body = response.json<Record<string, string>>();
        // Bob has no grant his agent's permission set could give: the refusal carries his link
        // (docs/authorization-requests.md); every other refusal of the table is before that step.
        const link = name === 'no session with the service' ? ['authorization_request'] : [];
        expect(Object.keys(body).sort()).toEqual([...link, 'error', 'error_description']);
        expect(body.error).toBe(error);
      });
    }

    it('a client assertion with a bad signature, alg none, or HS256 with the public key → 401 invalid_client', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const forged = await new SignJWT({ sub: 'gateway-1' })
        .setProtectedHeader({ alg: 'ES256', kid: issuer.publicJwk.kid })
        .setIssuer(issuer.issuer)
        .setAudience(base)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
      const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const none = `${encode({ alg: 'none' })}.${encode({ sub: 'gateway-1', iss: issuer.issuer, aud: base, iat: now, exp: now + 300 })}.`;
      const hs256 = await new SignJWT({ sub: 'gateway-1' })
        .setProtectedHeader({ alg: 'HS256', kid: issuer.publicJwk.kid })
        .setIssuer(issuer.issuer)
        .setAudience(base)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(JSON.stringify(issuer.publicJwk)));
      for (const bad of [forged, none, hs256]) {
        const response = await exchange(await valid({ client_assertion: bad }));
        expect(response.status).toBe(401);
        expect(response.json<{ error: string }>().error).toBe('invalid_client');
      }
    });

    it('an access token of the broker itself presented as the client assertion → 401 invalid_client', async () => {
      const admin = new ApiClient(broker.url('admin'));
      const secret = (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret;
      const own = (
        await http(`${base}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: agent,
            client_secret: secret,
          }).toString(),
        })
      ).json<{ access_token: string }>().access_token;
      const response = await exchange(await valid({ client_assertion: own }));
      expect(response.status).toBe(401);
    });
  });

  it('accepts an access token typed at+jwt as the subject token, and an explicitly typed client assertion', async () => {
    const response = await exchange(
      await valid({
        client_assertion: await assertion({}, { typ: 'client-authentication+jwt' }),
        subject_token: await subjectToken({}, { typ: 'at+jwt' }),
      }),
    );
    expect(response.status, response.text).toBe(200);
  });

  it('lets a gateway reuse one client assertion for many exchanges by default', async () => {
    const reused = await assertion();
    for (let i = 0; i < 3; i += 1) expect((await exchange(await valid({ client_assertion: reused }))).status).toBe(200);
  });

  it('audits a subject token for another audience as a refusal, without the token', async () => {
    const fields = await valid({
      subject_token: await subjectToken({}, { audience: 'https://calendar-api.example.com' }),
    });
    const before = broker.logs.records().filter((r) => r.event === 'token_exchange').length;
    expect((await exchange(fields)).json()).toEqual({
      error: 'invalid_request',
      error_description: 'the subject token is not valid',
    });
    const records = broker.logs.records().filter((r) => r.event === 'token_exchange');
    expect(records).toHaveLength(before + 1);
    expect(records.at(-1)).toMatchObject({
      principal: null,
      agent_id: null,
      outcome: 'refused',
      oauth_error: 'invalid_request',
      resource: 'https://mail.example.com/api',
    });
    expect(broker.logs.leaked([fields.client_assertion, fields.subject_token])).toEqual([]);
  });

  it('stops at once when the grant is revoked, leaving the session', async () => {
    const alice = new ApiClient(base, ALICE);
    expect((await alice.delete(`/api/consent/agents/${agent}/grants`)).status).toBe(204);
    expect((await exchange(await valid())).json<{ error: string }>().error).toBe('access_denied');
    expect((await alice.get(`/api/third-party/${service}/session`)).status).toBe(200);
    await alice.post(`/api/consent/agents/${agent}/grants`, { granted_permission_sets: { [set]: [service] } });
    expect((await exchange(await valid())).status).toBe(200);
  });

  it('answers invalid_grant with the reconnect error_uri when the session is gone', async () => {
    const alice = new ApiClient(base, ALICE);
    await alice.delete(`/api/third-party/${service}/session`);
    const response = await exchange(await valid());
    expect(response.status).toBe(400);
    // The agent's permission set names the service: the refusal also carries the person's link
    // (docs/authorization-requests.md).
    expect(response.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'the user has no usable session with the service: reconnect it',
      error_uri: `${base}/api/third-party/${service}/oauth2/authorize`,
      authorization_request: {
        id: expect.any(String) as string,
        url: expect.stringMatching(`^${base}/authorization-requests/`) as string,
        expires_at: expect.any(String) as string,
        expires_in: expect.any(Number) as number,
      },
    });
    await broker.broker
      .server('enduser')
      .app.get(TokenVault)
      .store(ALICE, service, {
        accessToken: 'third-party-access-token-1234567890',
        tokenType: 'Bearer',
        refreshToken: undefined,
        expiresIn: 3600,
        refreshTokenExpiresIn: undefined,
        scopes: ['mail.read'],
      });
  });

  it('refuses a repeated parameter with invalid_request and still audits the refusal', async () => {
    const form = `${new URLSearchParams((await valid()) as Record<string, string>).toString()}&resource=${encodeURIComponent('https://mail.example.com/api')}`;
    const before = broker.logs.records().filter((r) => r.event === 'token_exchange').length;
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({ error: 'invalid_request', error_description: 'parameter resource is repeated' });
    const records = broker.logs.records().filter((r) => r.event === 'token_exchange');
    expect(records).toHaveLength(before + 1);
    expect(records.at(-1)).toMatchObject({
      outcome: 'refused',
      oauth_error: 'invalid_request',
      resource: 'https://mail.example.com/api',
    });
  });

  it('audits every exchange without any token, and fetches the trust anchor keys once', async () => {
    const fields = await valid();
    const form = new URLSearchParams(fields as Record<string, string>).toString();
    const trace = '0af7651916cd43dd8448eb211c80319c';
    expect(
      (
        await http(`${base}/oauth2/token`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            traceparent: `00-${trace}-b7ad6b7169203331-01`,
          },
          body: form,
        })
      ).status,
    ).toBe(200);
    const records = broker.logs.records().filter((r) => r.event === 'token_exchange');
    expect(records.length).toBeGreaterThan(10);
    // Refusals name their OAuth error in clear (a field the log redaction would hide is a bug).
    expect(records.filter((r) => r.outcome === 'refused').map((r) => r.oauth_error)).toContain('access_denied');
    expect(records.at(-1)).toMatchObject({
      audit: true,
      request_id: trace,
      principal: ALICE,
      agent_id: agent,
      service_id: service,
      resource: 'https://mail.example.com/api',
      outcome: 'issued',
      oauth_error: null,
    });
    expect(
      broker.logs.leaked([fields.client_assertion, fields.subject_token, 'third-party-access-token-1234567890']),
    ).toEqual([]);
    expect(issuer.fetches()).toBe(1);
  });
});

/**
 * The options: `single_use` (RFC 7523 §3, a `jti` accepted once, recorded in
 * the database so every replica shares it) and `max_lifetime`.
 */
describe.each(testBackends())('token exchange with single-use, short-lived client assertions on $name', (backend) => {
  let issuer: TestJwtIssuer;
  const brokers: TestBroker[] = [];
  let base: string;
  let agent: string;
  let storage: Record<string, unknown>;
  const keys = {
    encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
    third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
  };
  const startReplica = async (port: number): Promise<TestBroker> => {
    const replica = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        ...keys,
        storage,
        server: { enduser: { port, public_url: base } },
        token_exchange: {
          client_assertion: {
            issuer_uri: issuer.issuer,
            jwks_uri: issuer.jwksUri,
            single_use: true,
            max_lifetime: '5m',
          },
        },
      },
    });
    brokers.push(replica);
    return replica;
  };

  beforeAll(async () => {
    issuer = await startJwtIssuer('ES256');
    storage = await backend.storage();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    ({ agent } = await provision(await startReplica(port), base));
  });

  afterAll(async () => {
    for (const broker of brokers) await broker.stop();
    await issuer?.stop();
  });

  const assertion = (claims: Record<string, unknown> = {}, options: SignOptions = {}) =>
    issuer.sign({ sub: 'gateway-1', jti: randomUUID(), ...claims }, { audience: base, ...options });
  const fields = async (clientAssertion: string) => ({
    grant_type: EXCHANGE,
    client_assertion_type: JWT_BEARER,
    client_assertion: clientAssertion,
    subject_token: await issuer.sign({ sub: ALICE, azp: agent }, { audience: base, ttlSeconds: 3600 }),
    subject_token_type: ACCESS,
    resource: 'https://mail.example.com/api',
  });
  const exchange = async (clientAssertion: string, at = base) =>
    postForm(`${at}/oauth2/token`, await fields(clientAssertion));

  it('accepts a client assertion once: every later presentation (a cached verification too) is 401 invalid_client, and audited', async () => {
    const once = await assertion();
    expect((await exchange(once)).status).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const replay = await exchange(once);
      expect(replay.status).toBe(401);
      expect(replay.json()).toEqual({
        error: 'invalid_client',
        error_description: 'the client assertion was already used',
      });
    }
    const records = brokers[0]?.logs.records().filter((r) => r.event === 'token_exchange') ?? [];
    expect(records.at(-1)).toMatchObject({ outcome: 'refused', oauth_error: 'invalid_client' });
    expect(brokers[0]?.logs.leaked([once])).toEqual([]);
    // A fresh assertion is accepted.
    expect((await exchange(await assertion())).status).toBe(200);
  });

  it('accepts one of many concurrent presentations of an assertion', async () => {
    const once = await assertion();
    const statuses = await Promise.all(Array.from({ length: 6 }, () => exchange(once).then((r) => r.status)));
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
  });

  it('refuses a client assertion without jti', async () => {
    const response = await exchange(await issuer.sign({ sub: 'gateway-1' }, { audience: base }));
    expect(response.status).toBe(401);
    expect(response.json()).toEqual({
      error: 'invalid_client',
      error_description: 'the client assertion has no jti (single use is required)',
    });
  });

  it('refuses a client assertion living longer than max_lifetime', async () => {
    expect((await exchange(await assertion({}, { ttlSeconds: 3600 }))).json<{ error: string }>().error).toBe(
      'invalid_client',
    );
    expect((await exchange(await assertion({}, { ttlSeconds: 240 }))).status).toBe(200);
  });

  // Replicas share a database only on PostgreSQL (PGlite is one process by construction).
  if (backend.name === 'postgres')
    it('shares the replay record between replicas: an assertion used on one is refused on the other', async () => {
      const port = await freePort();
      const other = `http://127.0.0.1:${port}`;
      await startReplica(port);
      const once = await assertion();
      expect((await exchange(once)).status).toBe(200);
      expect((await exchange(once, other)).status).toBe(401);
      const second = await assertion();
      expect((await exchange(second, other)).status).toBe(200);
      expect((await exchange(second)).status).toBe(401);
    });
});

describe("the gateway's trust anchor at start-up", () => {
  it("refuses the broker's own issuer, naming the key", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    await expect(
      startTestBroker({
        servers: BOTH_SERVERS,
        config: {
          server: { enduser: { port, public_url: base } },
          token_exchange: { client_assertion: { issuer_uri: base, jwks_uri: `${base}/oauth2/jwks.json` } },
        },
      }),
    ).rejects.toThrow(/^config error: token_exchange\.client_assertion\.issuer_uri is the broker's own issuer/);
  });

  it('stops the process with exit code 2 and one line naming the key', async () => {
    const own = 'http://broker.example.com';
    const { file } = writeConfigFile(
      testConfigTree({
        server: { enduser: { public_url: own } },
        token_exchange: { client_assertion: { issuer_uri: own, jwks_uri: `${own}/oauth2/jwks.json` } },
      }),
    );
    const process = new BrokerProcess('broker', ['--config', file]);
    // A broker that starts instead is stopped again, so a failure leaves no process behind.
    const started = process.listening(['enduser']).then(
      () => true,
      () => false,
    );
    if (await Promise.race([started, process.exited.then(() => false)])) process.signal('SIGKILL');
    expect(await started).toBe(false);
    expect((await process.exited).code).toBe(2);
    // The launcher's line comes last (Nest's own exception handler may print the error before it).
    expect(process.stderr.join('').trimEnd().split('\n').at(-1)).toBe(
      `config error: token_exchange.client_assertion.issuer_uri is the broker's own issuer (${own}): the gateway's tokens must come from another issuer, or an agent's access token could pass as the gateway`,
    );
  });
});
