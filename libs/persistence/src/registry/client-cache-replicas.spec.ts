import { randomUUID } from 'node:crypto';
import { FrozenClock, postgresServerUrl, openPostgresReplicas, listenSessions } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresApprovalChangeFeed } from '../approvals/approval-change-feed';
import type { Database } from '../database';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { AgentRepository } from './agent.repository';
import { ClientCredentialRepository } from './client-credential.repository';

/** Two processes on one PostgreSQL: each with its own `Database`, as two broker replicas have. */
describe.runIf(postgresServerUrl())('ClientCache across replicas on PostgreSQL', () => {
  let replicaA: Database;
  let replicaB: Database;
  // Frozen: the 5 s backstop never passes, so only a notification can clear A's cache.
  const clock = new FrozenClock();

  beforeAll(async () => {
    [replicaA, replicaB] = await openPostgresReplicas();
  });

  afterAll(async () => {
    await replicaA?.close();
    await replicaB?.close();
  });

  const listenConnections = (): Promise<number> => listenSessions(replicaA);

  it("clears one replica's cached client when another replica rotates its secret, before any TTL", async () => {
    const agentsA = new AgentRepository(
      replicaA.dataSource,
      replicaA.clientCache,
      clock,
      new Transactions(replicaA.dataSource),
      new ExchangeChanges(replicaA.exchangeCache, replicaA.tokenState),
    );
    const credentialsB = new ClientCredentialRepository(replicaB.dataSource, replicaB.clientCache);
    const agent = randomUUID();
    await replicaB.dataSource.query(
      "INSERT INTO agents (id, display_name, created_at, updated_at) VALUES ($1, 'Agent', now(), now())",
      [agent],
    );
    await credentialsB.upsert(agent, Buffer.from('first'), clock.now());

    expect((await agentsA.findClient(agent))?.secretSha256?.toString()).toBe('first');
    // The cache listens from its first lookup; once LISTEN runs it is cleared, so wait for it.
    for (let i = 0; i < 100 && (await listenConnections()) === 0; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await agentsA.findClient(agent))?.secretSha256?.toString()).toBe('first');

    await credentialsB.upsert(agent, Buffer.from('second'), clock.now());
    let seen: string | undefined;
    for (let i = 0; i < 100; i += 1) {
      seen = (await agentsA.findClient(agent))?.secretSha256?.toString();
      if (seen === 'second') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(seen).toBe('second');
  });

  it('shares one LISTEN connection per process between the approvals feed and the client cache, and opens none where no client was looked up', async () => {
    // A looked a client up above; B never did (as a process serving only the admin API).
    expect(await listenConnections()).toBe(1);
    const feed = new PostgresApprovalChangeFeed(replicaA.notifications as NonNullable<Database['notifications']>);
    await feed.start({ changed: () => undefined, resync: () => undefined, lost: () => undefined });
    try {
      expect(await listenConnections()).toBe(1);
    } finally {
      await feed.stop();
    }
    // The client cache still holds the connection after the feed left.
    expect(await listenConnections()).toBe(1);
  });
});
