import {
  ApiClient,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type ThirdPartyProvider,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThirdParty, grantMail, registerMailService } from '../support/mail-service';
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
    const mail = await registerMailService(new ApiClient(broker.url('admin')), base);
    ({ provider, agent } = mail);
    for (const person of PEOPLE) {
      await grantMail(base, person, mail);
      await connectThirdParty(base, person, mail.service, { login: person.split('@')[0] });
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
