import {
  ApiClient,
  completeAuthorization,
  http,
  startGatewayFixture,
  startThirdPartyProvider,
  testBackends,
  type GatewayFixture,
  type ThirdPartyProvider,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const PEOPLE = ['ann@example.com', 'ben@example.com', 'cai@example.com', 'dee@example.com'];
/** Fewer connections than refreshes at once: each refresh holds one for its row lock (PostgreSQL). */
const POOL_SIZE = 2;

/**
 * A refresh holds its session's row lock on one pool connection while the provider
 * answers. Anything else it reads must not need a second connection, or as many
 * concurrent refreshes as the pool has connections wait on each other until the pool's
 * acquire timeout fails them all (found by the operations benchmark).
 */
describe.each(testBackends())('concurrent refreshes of different sessions on a small pool on $name', (backend) => {
  let gateway: GatewayFixture;
  let provider: ThirdPartyProvider;
  let agent: string;
  let service: string;

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      algorithm: 'ES256',
      gatewaySub: 'gateway',
      // The exchanges refresh, not the background sweep.
      config: {
        storage: { postgres: { pool_size: POOL_SIZE } },
        token_refresh: { proactive: { enabled: false } },
        third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
      },
    });
    const { broker, base } = gateway;
    const admin = new ApiClient(broker.url('admin'));
    const p = 'https://placeholder.example.com';
    service = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'x',
        client_secret: 'x',
        issuer_uri: p,
        authorization_endpoint: `${p}/a`,
        token_endpoint: `${p}/t`,
        protected_resources: ['https://mail.example.com'],
      })
    ).json<{ id: string }>().id;
    provider = await startThirdPartyProvider({
      redirectUris: [`${base}/api/third-party/${service}/oauth2/callback`],
      scopes: ['mail.read'],
    });
    await admin.put(`/api/services/${service}`, {
      display_name: 'Mail',
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
      issuer_uri: provider.issuer,
      protected_resources: ['https://mail.example.com'],
    });
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    agent = (
      await admin.post('/api/agents', { display_name: 'Agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    for (const person of PEOPLE) {
      const client = new ApiClient(base, person);
      await client.post(`/api/consent/agents/${agent}/grants`, { granted_permission_sets: { [set]: [service] } });
      const start = await client.get(
        `/api/third-party/${service}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${base}/done`)}`,
      );
      const callback = await completeAuthorization(
        start.headers.location as string,
        `${base}/api/third-party/${service}/oauth2/callback`,
        person.split('@')[0],
      );
      expect((await http(callback, { headers: { 'x-remote-user': person } })).headers.location).toContain(
        'success=true',
      );
    }
  });

  afterAll(async () => {
    await gateway?.stop();
    await provider?.stop();
  });

  it(`${PEOPLE.length} people's expired tokens exchanged at once on a pool of ${POOL_SIZE}: every exchange refreshed and answered 200`, async () => {
    await gateway.broker.broker.runtime.database.dataSource.query(
      "UPDATE third_party_sessions SET access_token_expires_at = now() - interval '1 minute'",
    );
    // Served from memory on PostgreSQL: the next request must see this write (docs/oauth2.md "The hot path").
    await gateway.broker.broker.runtime.database.settleNotifications();
    const before = provider.refreshes();
    const answers = await Promise.all(PEOPLE.map(async (person) => (await gateway.exchange(person, agent)).response));
    expect(answers.map((answer) => answer.status)).toEqual(PEOPLE.map(() => 200));
    expect(new Set(answers.map((answer) => answer.json<{ access_token: string }>().access_token)).size).toBe(
      PEOPLE.length,
    );
    expect(provider.refreshes() - before).toBe(PEOPLE.length);
  });
});
