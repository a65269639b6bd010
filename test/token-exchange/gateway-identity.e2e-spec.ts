import {
  ApiClient,
  http,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { EventLedger } from '@broker/events';
import { TokenVault } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const RESOURCE = 'https://mail.example.com/api';

/** A service, a permission set, an agent; Alice's and Bob's grants to it and their stored third-party tokens. */
async function provision(broker: TestBroker, base: string): Promise<string> {
  const admin = new ApiClient(broker.url('admin'));
  const service = (
    await admin.post('/api/services', {
      display_name: 'Mail',
      client_id: 'm',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/a',
      token_endpoint: 'https://idp.example.com/t',
      protected_resources: [RESOURCE],
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
  const vault = broker.broker.server('enduser').app.get(TokenVault);
  for (const person of [ALICE, BOB]) {
    expect(
      (
        await new ApiClient(base, person).post(`/api/consent/agents/${agent}/grants`, {
          granted_permission_sets: { [set]: [service] },
        })
      ).status,
    ).toBe(201);
    await vault.store(person, service, {
      accessToken: `third-party-token-of-${person}`,
      tokenType: 'Bearer',
      refreshToken: undefined,
      expiresIn: 3600,
      refreshTokenExpiresIn: undefined,
      scopes: ['mail.read'],
    });
  }
  return agent;
}

/**
 * A person's access token for an agent never authenticates the gateway (docs/security.md,
 * "Gateway credentials told apart"). The broker runs with the documented defaults: the
 * subject token's audience is the client assertion's, and the authorization expressions
 * of the exchange and of the approval sync are `true`. The person's tokens are what an
 * upstream issuer such as Keycloak or Entra ID gives them: untyped, `aud` the broker,
 * `sub` the person, `azp` the agent.
 */
describe.each(testBackends())("a person's token is never the gateway's credential, on $name", (backend) => {
  let gateway: GatewayFixture;
  let base: string;
  let agent: string;

  beforeAll(async () => {
    gateway = await startGatewayFixture({ servers: BOTH_SERVERS, backend });
    ({ base } = gateway);
    agent = await provision(gateway.broker, base);
  });

  afterAll(async () => {
    await gateway.stop();
  });

  /** A person's access token for the agent, as the upstream issuer issues it (no `typ`, or `JWT`). */
  const personToken = (person: string, typ?: string): Promise<string> =>
    gateway.subjectToken(person, agent, {}, typ === undefined ? {} : { typ });

  const exchange = (assertion: string, subject: string): Promise<HttpResponse> =>
    http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: EXCHANGE,
        client_assertion_type: JWT_BEARER,
        client_assertion: assertion,
        subject_token: subject,
        subject_token_type: ACCESS,
        resource: RESOURCE,
      }).toString(),
    });

  const createApproval = (assertion: string, subject: string, tool = 'send_email'): Promise<HttpResponse> =>
    http(`${base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${subject}`,
        'x-client-assertion': assertion,
      },
      body: JSON.stringify({ metadata: {}, tool_name: tool, arguments: { to: 'carol@example.com' } }),
    });

  const sync = (assertion: string, principal = ALICE): Promise<HttpResponse> =>
    http(`${base}/api/approvals?principal=${encodeURIComponent(principal)}`, {
      headers: { 'x-client-assertion': assertion },
    });

  function expectInvalidClient(response: HttpResponse): void {
    expect(response.status, response.text).toBe(401);
    expect(response.json<Record<string, string>>()).toMatchObject({ error: 'invalid_client' });
    expect(response.text).not.toContain('third-party-token-of');
  }

  function expectUnauthorized(response: HttpResponse): void {
    expect(response.status, response.text).toBe(401);
    expect(response.json<Record<string, string>>()).toMatchObject({ error: 'unauthorized' });
  }

  it('refuses one person token sent as both client assertion and subject token (untyped or typ JWT)', async () => {
    for (const typ of [undefined, 'JWT']) {
      const token = await personToken(ALICE, typ);
      expectInvalidClient(await exchange(token, token));
    }
  });

  it('refuses two different tokens of the same person', async () => {
    expectInvalidClient(await exchange(await personToken(ALICE), await personToken(ALICE)));
  });

  it("refuses one person's token as the assertion for another person's subject token (as a multi-user agent holds them)", async () => {
    expectInvalidClient(await exchange(await personToken(BOB), await personToken(ALICE)));
    expectInvalidClient(await exchange(await personToken(ALICE), await personToken(BOB)));
  });

  it("refuses an assertion whose sub is the subject token's principal even without an agent claim", async () => {
    const token = await gateway.assertion({ sub: ALICE });
    expectInvalidClient(await exchange(token, await personToken(ALICE)));
  });

  it('refuses a refused assertion again when it is presented a second time (its verification is remembered, its verdict too)', async () => {
    const token = await personToken(BOB);
    expectInvalidClient(await exchange(token, await personToken(ALICE)));
    expectInvalidClient(await exchange(token, await personToken(ALICE)));
  });

  it("refuses a person's token as the gateway on approval create and approval sync, for anyone's approvals", async () => {
    expectUnauthorized(await createApproval(await personToken(ALICE), await personToken(ALICE)));
    expectUnauthorized(await createApproval(await personToken(BOB), await personToken(ALICE)));
    expectUnauthorized(await sync(await personToken(ALICE)));
    expectUnauthorized(await sync(await personToken(BOB), ALICE));
    const asBearer = await http(`${base}/api/approvals?principal=${encodeURIComponent(ALICE)}`, {
      headers: { authorization: `Bearer ${await personToken(ALICE)}` },
    });
    expectUnauthorized(asBearer);
  });

  it('keeps a real gateway assertion working on all three routes, reused as gateways reuse it', async () => {
    const assertion = await gateway.assertion();
    for (let i = 0; i < 2; i += 1) {
      const exchanged = await exchange(assertion, await personToken(ALICE));
      expect(exchanged.status, exchanged.text).toBe(200);
      expect(exchanged.json<{ access_token: string }>().access_token).toBe(`third-party-token-of-${ALICE}`);
    }
    const created = await createApproval(assertion, await personToken(ALICE), 'archive_email');
    expect(created.status, created.text).toBe(201);
    const synced = await sync(assertion);
    expect(synced.status, synced.text).toBe(200);
  });

  it('never records a gateway named after a person in the activity ledger', async () => {
    const app = gateway.broker.broker.server('enduser').app;
    await app.get(EventLedger).flush();
    const rows = await gateway.broker.broker.runtime.database.dataSource.query<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM events WHERE actor_type = 'gateway' AND actor_id IN ($1, $2)",
      [ALICE, BOB],
    );
    expect(rows[0]?.n).toBe(0);
    const gatewayRows = await gateway.broker.broker.runtime.database.dataSource.query<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM events WHERE actor_type = 'gateway' AND actor_id = 'gateway-1'",
    );
    expect(gatewayRows[0]?.n).toBeGreaterThan(0);
  });
});
