import { randomUUID } from 'node:crypto';
import {
  ApiClient,
  http,
  startGatewayFixture,
  startJwtIssuer,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
  type TestJwtIssuer,
} from '@broker/testing';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';
import { EventLedger } from '@broker/events';

const ALICE = 'alice@example.com';
const GATEWAY = 'gateway';
const IMPERSONATION_PREFIX = 'https://impersonation.example.com';
const ACTOR_AUDIENCE = 'https://ops.example.com';
const SUBJECT_AUDIENCE = 'https://apps.example.com';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const UNAUTHENTICATED = 'broker_token_requests_unauthenticated_total';

/** Sum of a counter family's samples whose labels include `labels`, from one scrape of the admin server. */
function counter(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const [, series, value] of text.matchAll(/^(\S+?(?:\{[^}]*\})?) (\S+)$/gm)) {
    const [family, rest = ''] = (series as string).split('{');
    if (family !== name) continue;
    if (Object.entries(labels).every(([key, wanted]) => rest.includes(`${key}="${wanted}"`))) sum += Number(value);
  }
  return sum;
}

/**
 * docs/security.md: a request that did not authenticate a gateway (its client assertion
 * bad, absent or signed by a key the trust anchor does not hold; the impersonation client
 * matching no rule) is counted in `broker_token_requests_unauthenticated_total` and records
 * no ledger event, hence no webhook delivery; a refused request of an authenticated gateway
 * is still recorded as a failure.
 */
describe.each(testBackends())('unauthenticated token requests leave the activity ledger alone on $name', (backend) => {
  let issuer: TestJwtIssuer;
  /** An issuer the broker does not trust. */
  let other: TestJwtIssuer;
  let gateway: GatewayFixture;
  let admin: ApiClient;
  let agent: string;

  beforeAll(async () => {
    issuer = await startJwtIssuer('RS256');
    other = await startJwtIssuer('RS256');
    const impersonation = {
      audience_prefix: IMPERSONATION_PREFIX,
      rules: [
        {
          name: 'ops',
          roles: {
            client_assertion: {},
            actor: { expected_audience: ACTOR_AUDIENCE },
            subject: { expected_audience: SUBJECT_AUDIENCE },
          },
          trusted_issuers: [
            {
              issuer_uri: issuer.issuer,
              jwks_uri: issuer.jwksUri,
              allowed_algorithms: ['RS256'],
              signs_roles: ['client_assertion', 'actor', 'subject'],
            },
          ],
          authorization: { cel: { expression: `client_assertion.sub == "${GATEWAY}"` } },
        },
      ],
    };
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      issuer,
      gatewaySub: GATEWAY,
      config: {
        oauth2_authorization_server: { impersonation },
        events: { webhooks: { allowed_networks: ['127.0.0.0/8'] } },
      },
    });
    admin = new ApiClient(gateway.broker.url('admin'));
    agent = (await admin.post('/api/agents', { display_name: 'Agent' })).json<{ id: string }>().id;
    // A webhook subscribed to both hot-path kinds: every recorded event gets one outbox row (its URL never answers: rows stay).
    const webhook = await admin.post('/api/webhooks', {
      url: 'http://127.0.0.1:9/hooks',
      event_types: ['token.exchanged', 'impersonation.decided'],
      enabled: true,
    });
    expect(webhook.status).toBe(201);
  });

  afterAll(async () => {
    await gateway?.stop();
    await issuer?.stop();
    await other?.stop();
  });

  const ledger = (): EventLedger => gateway.broker.broker.server('enduser').app.get(EventLedger);
  const database = () => gateway.broker.broker.runtime.database.dataSource;

  async function count(sql: string): Promise<number> {
    await ledger().flush();
    return (await database().query<{ n: number }[]>(sql))[0]?.n ?? -1;
  }

  const hotPathEvents = () =>
    count("SELECT count(*)::int AS n FROM events WHERE type IN ('token.exchanged', 'impersonation.decided')");
  const deliveries = () =>
    count(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_type IN ('token.exchanged', 'impersonation.decided')",
    );
  const scrape = async (): Promise<string> => (await http(`${gateway.broker.url('admin')}/metrics`)).text;

  function post(fields: Record<string, string> | string): Promise<HttpResponse> {
    const body = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString();
    return http(`${gateway.base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
  }

  /** An assertion naming the trusted issuer and its key id, signed with a key the issuer never published. */
  async function forgedAssertion(): Promise<string> {
    const { privateKey } = await generateKeyPair('RS256');
    return new SignJWT({ sub: GATEWAY, jti: randomUUID() })
      .setProtectedHeader({ alg: 'RS256', kid: issuer.publicJwk.kid })
      .setIssuer(issuer.issuer)
      .setAudience(gateway.base)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
  }

  async function exchangeFields(clientAssertion: string | undefined): Promise<Record<string, string>> {
    return {
      grant_type: TOKEN_EXCHANGE,
      client_assertion_type: JWT_BEARER,
      ...(clientAssertion === undefined ? {} : { client_assertion: clientAssertion }),
      subject_token: await gateway.subjectToken(ALICE, agent),
      subject_token_type: ACCESS_TOKEN_TYPE,
      resource: 'https://mail.example.com',
    };
  }

  async function impersonationFields(clientAssertion: string, target = agent): Promise<Record<string, string>> {
    return {
      grant_type: TOKEN_EXCHANGE,
      audience: `${IMPERSONATION_PREFIX}/${target}`,
      client_assertion_type: JWT_BEARER,
      client_assertion: clientAssertion,
      actor_token_type: JWT_TYPE,
      actor_token: await issuer.sign({ sub: 'ops-1' }, { audience: ACTOR_AUDIENCE }),
      subject_token_type: JWT_TYPE,
      subject_token: await issuer.sign({ sub: ALICE }, { audience: SUBJECT_AUDIENCE }),
    };
  }

  it('records no event and no webhook delivery for N unauthenticated requests, and counts each by grant and OAuth error code', async () => {
    const eventsBefore = await hotPathEvents();
    const deliveriesBefore = await deliveries();
    const before = await scrape();

    const exchanges: Array<[string, () => Promise<HttpResponse>, number, string]> = [
      [
        'a client assertion that is not a JWT',
        async () => post(await exchangeFields('not-a-jwt')),
        401,
        'invalid_client',
      ],
      ['no client assertion', async () => post(await exchangeFields(undefined)), 400, 'invalid_request'],
      [
        'a client assertion signed by a foreign key',
        async () => post(await exchangeFields(await forgedAssertion())),
        401,
        'invalid_client',
      ],
      [
        'a client assertion of another issuer',
        async () => post(await exchangeFields(await other.sign({ sub: GATEWAY }, { audience: gateway.base }))),
        401,
        'invalid_client',
      ],
      [
        'the subject token presented as the client assertion',
        async () => post(await exchangeFields(await gateway.subjectToken(ALICE, agent))),
        401,
        'invalid_client',
      ],
      // The gateway counts as authenticated once the subject token shows the assertion is not the person's own.
      [
        'a valid assertion with a subject token that does not verify',
        async () => post({ ...(await exchangeFields(await gateway.assertion())), subject_token: 'not-a-jwt' }),
        400,
        'invalid_request',
      ],
      [
        'a wrong client_assertion_type',
        async () =>
          post({ ...(await exchangeFields(await gateway.assertion())), client_assertion_type: 'urn:example:other' }),
        400,
        'invalid_request',
      ],
      [
        'a repeated parameter (refused before the assertion is read)',
        async () =>
          post(
            `${new URLSearchParams(await exchangeFields(await gateway.assertion())).toString()}&resource=https://other.example.com`,
          ),
        400,
        'invalid_request',
      ],
    ];
    const impersonations: Array<[string, () => Promise<HttpResponse>, number, string]> = [
      [
        'a client assertion no rule trusts',
        async () => post(await impersonationFields(await forgedAssertion())),
        401,
        'invalid_client',
      ],
      [
        'a client assertion not addressed to the broker',
        async () =>
          post(
            await impersonationFields(
              await issuer.sign({ sub: GATEWAY }, { audience: 'https://elsewhere.example.com' }),
            ),
          ),
        401,
        'invalid_client',
      ],
      [
        'a repeated parameter',
        async () =>
          post(
            `${new URLSearchParams(await impersonationFields(await gateway.assertion())).toString()}&scope=a&scope=b`,
          ),
        400,
        'invalid_request',
      ],
      [
        'an unknown target (refused before any rule verified the client assertion)',
        async () => post(await impersonationFields(await gateway.assertion(), randomUUID())),
        400,
        'invalid_target',
      ],
    ];
    for (const [what, send, status, error] of [...exchanges, ...impersonations]) {
      const answer = await send();
      expect(answer.status, what).toBe(status);
      expect(answer.json<{ error: string }>().error, what).toBe(error);
    }

    expect(await hotPathEvents()).toBe(eventsBefore);
    expect(await deliveries()).toBe(deliveriesBefore);
    const after = await scrape();
    const moved = (labels: Record<string, string>): number =>
      counter(after, UNAUTHENTICATED, labels) - counter(before, UNAUTHENTICATED, labels);
    expect(moved({})).toBe(exchanges.length + impersonations.length);
    expect(moved({ grant: 'token_exchange' })).toBe(exchanges.length);
    expect(moved({ grant: 'token_exchange', reason: 'invalid_client' })).toBe(4);
    expect(moved({ grant: 'impersonation' })).toBe(impersonations.length);
    expect(moved({ grant: 'impersonation', reason: 'invalid_target' })).toBe(1);
    // The token endpoint's own counter still sees every answer.
    expect(
      counter(after, 'broker_token_requests_total', { grant_type: 'token_exchange' }) -
        counter(before, 'broker_token_requests_total', { grant_type: 'token_exchange' }),
    ).toBe(exchanges.length + impersonations.length);
  });

  it('still records a refused request of an authenticated gateway or impersonation client as a failure (event and delivery)', async () => {
    const eventsBefore = await hotPathEvents();
    const deliveriesBefore = await deliveries();
    const before = await scrape();

    // Authenticated, then refused: no service owns the resource (RFC 8693 §2.2.2).
    const refused = await gateway.exchange(ALICE, agent, { resource: 'https://unknown.example.com' });
    expect(refused.response.status).toBe(400);
    expect(refused.response.json()).toMatchObject({ error: 'invalid_target' });
    // Authenticated by the rule, then refused: the actor token is addressed to someone else.
    const badActor = {
      ...(await impersonationFields(await gateway.assertion())),
      actor_token: await issuer.sign({ sub: 'ops-1' }, { audience: 'https://elsewhere.example.com' }),
    };
    expect((await post(badActor)).status).toBe(400);
    // Authenticated and matched, then refused: Alice never delegated to the agent.
    expect((await post(await impersonationFields(await gateway.assertion()))).status).toBe(403);

    expect(await hotPathEvents()).toBe(eventsBefore + 3);
    expect(await deliveries()).toBe(deliveriesBefore + 3);
    const rows = await database().query<
      { type: string; actor_id: string | null; outcome: string; details: { oauth_error: string } }[]
    >(
      "SELECT type, actor_id, outcome, details FROM events WHERE type IN ('token.exchanged', 'impersonation.decided') ORDER BY seq DESC LIMIT 3",
    );
    expect(rows.reverse()).toMatchObject([
      { type: 'token.exchanged', actor_id: GATEWAY, outcome: 'failure', details: { oauth_error: 'invalid_target' } },
      { type: 'impersonation.decided', outcome: 'failure', details: { oauth_error: 'invalid_request' } },
      {
        type: 'impersonation.decided',
        actor_id: 'ops-1',
        outcome: 'failure',
        details: { oauth_error: 'access_denied' },
      },
    ]);
    expect(counter(await scrape(), UNAUTHENTICATED) - counter(before, UNAUTHENTICATED)).toBe(0);
  });
});
