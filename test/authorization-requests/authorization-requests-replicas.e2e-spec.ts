import {
  createPostgresDatabase,
  eventually,
  freePort,
  postgresServerUrl,
  startJwtIssuer,
  startTestBroker,
  testKey,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthorizationRequestWorld,
  person,
  type RequestState,
  type TestService,
} from '../support/authorization-requests';
import { BOTH_SERVERS } from '../support/servers';

/**
 * Two broker replicas (each its own app, pool, LISTEN connection and held long-polls) on one
 * PostgreSQL database behind one public URL: a request made on one and answered on the other
 * wakes the gateway's wait held by the first, and two replicas refusing the same exchange at
 * once make one request.
 */
describe.runIf(postgresServerUrl())('authorization requests across two replicas on PostgreSQL', () => {
  let issuer: TestJwtIssuer;
  let a: TestBroker;
  let b: TestBroker;
  let onA: AuthorizationRequestWorld;
  let onB: AuthorizationRequestWorld;
  let services: TestService[];
  let agent: string;

  beforeAll(async () => {
    issuer = await startJwtIssuer('ES256');
    const storage = { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } };
    const keys = {
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
    };
    const aPort = await freePort();
    const publicUrl = `http://127.0.0.1:${aPort}`;
    const start = (port: number) =>
      startTestBroker({
        servers: BOTH_SERVERS,
        config: {
          ...keys,
          storage,
          server: { enduser: { port, public_url: publicUrl } },
          token_exchange: {
            client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri },
            authorization: { cel: { expression: 'client_assertion.sub == "gateway-1"' } },
          },
          // Ten requests of one person and agent within the minute (the second test).
          authorization_requests: { rate_limit: { max_requests_per_minute: 100 } },
        },
      });
    a = await start(aPort);
    const bPort = await freePort();
    b = await start(bPort);
    onA = new AuthorizationRequestWorld(a, publicUrl, issuer);
    onB = onA.on(b, `http://127.0.0.1:${bPort}`);
    services = await onA.services(11);
    agent = await onA.agent(services);
  });

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await issuer?.stop();
  });

  it("answers A's held wait `completed` within a second of B's answer to the allow", async () => {
    const alice = person('alice');
    const mail = services[0] as TestService;
    await onA.connect(alice, mail);
    const request = await onA.requested(alice, agent, mail);
    const holding = onA.holding;
    let answeredAt = Number.NaN;
    const waiting = onA.held(request.id).then((response) => {
      answeredAt = performance.now();
      return response;
    });
    await eventually(
      () => onA.holding,
      (held) => held === holding + 1,
      { waitingFor: 'A to hold the wait' },
    );

    const allowed = await onB.allow(alice, request.id, { valid_until: null });
    const allowedAt = performance.now();
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.json<{ data: { status: string } }>().data.status).toBe('completed');
    const response = await waiting;
    expect(response.status, response.text).toBe(200);
    expect(response.headers.etag).toBe('"completed"');
    expect(response.json<{ data: RequestState }>().data).toMatchObject({ id: request.id, status: 'completed' });
    // Delivery of the change across replicas: the notification, not a poll or the wait's 60 s timeout.
    expect(answeredAt - allowedAt).toBeLessThan(1_000);

    // The gateway retries on A: the grant written through B is served.
    const retried = await onA.exchange(alice, agent, mail);
    expect(retried.status, retried.text).toBe(200);
  });

  it('makes one request of the same refused exchange arriving at A and B at once (ten pairs)', async () => {
    const alice = person('alice');
    const pairs = services.slice(1, 11);
    const answers = await Promise.all(
      pairs.map(async (service) => {
        const fields = await onA.exchangeFields(alice, agent, service);
        return Promise.all([onA.postExchange(fields), onB.postExchange(fields)]);
      }),
    );
    for (const [onAnswer, onBAnswer] of answers) {
      expect(onAnswer.status, onAnswer.text).toBe(403);
      expect(onBAnswer.status, onBAnswer.text).toBe(403);
      const ids = [onAnswer, onBAnswer].map(
        (answer) => answer.json<{ authorization_request?: { id: string } }>().authorization_request?.id,
      );
      expect(ids[0]).toEqual(expect.any(String));
      expect(ids[1]).toBe(ids[0]);
    }
    expect(await onA.rows(alice)).toBe(pairs.length);
    // Queued like the exchange's own events, by each replica's ledger.
    const created = await eventually(
      () => onB.events(alice, ['authorization_request.created']),
      (found) => found.length >= pairs.length,
      { waitingFor: 'the created events' },
    );
    expect(created).toHaveLength(pairs.length);
  });
});
