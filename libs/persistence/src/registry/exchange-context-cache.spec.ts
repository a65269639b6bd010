import { randomUUID } from 'node:crypto';
import { eventually, postgresServerUrl, openPostgresReplicas } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../database';
import { EXCHANGE_CHANNEL } from './exchange-context-cache';
import { ExchangeLookup } from './exchange-lookup';

/**
 * The token exchange's context cache on PostgreSQL, with two `Database`s on one database as
 * two broker replicas have: B reads, A (or plain SQL) writes, and B's entries go when the
 * write's `NOTIFY exchange_changed` arrives.
 */
describe.runIf(postgresServerUrl())('ExchangeContextCache on PostgreSQL', () => {
  let replicaA: Database;
  let replicaB: Database;
  const resource = 'https://mail.example.com/api';
  let service: string;
  let set: string;
  let agent: string;
  const now = new Date('2026-11-26T12:00:00Z');

  /** Statements the lookup ran, counted on B's pool: a served-from-memory lookup runs none. */
  let statements = 0;
  let lookupB: ExchangeLookup;

  const sql = <T = unknown>(text: string, values: unknown[] = []): Promise<T[]> =>
    replicaA.dataSource.query<T[]>(text, values);

  /** A grant of `principal` to the agent delegating the service, and a sealed session. */
  const grantAndSession = async (principal: string, validUntil: Date | null = null): Promise<string> => {
    const grant = randomUUID();
    await sql(
      'INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) VALUES ($1, $2, $3, $4, now(), now())',
      [grant, principal, agent, validUntil],
    );
    await sql(
      `INSERT INTO grant_delegations (grant_id, permission_set_id, service_id, scopes, position) VALUES ($1, $2, $3, '["read"]', 0)`,
      [grant, set, service],
    );
    await sql(
      `INSERT INTO third_party_sessions (id, principal, service_id, access_token_envelope, token_type, scopes, initiated_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, '\\x00', 'Bearer', '["read"]', now(), now())`,
      [principal, service],
    );
    return grant;
  };

  /**
   * Resolves once B has heard every notification committed so far: a marker sent after them
   * arrives after them on B's one notification connection, where the cache hears them too.
   */
  const settled = async (): Promise<void> => {
    const marker = `marker-${randomUUID()}`;
    let heard!: () => void;
    const arrived = new Promise<void>((resolve) => (heard = resolve));
    const unsubscribe = await (replicaB.notifications as NonNullable<Database['notifications']>).subscribe(
      EXCHANGE_CHANNEL,
      { notify: (payload) => payload === marker && heard(), resync: () => undefined, lost: () => undefined },
    );
    await sql('SELECT pg_notify($1, $2)', [EXCHANGE_CHANNEL, marker]);
    await arrived;
    await unsubscribe();
  };

  const read = (principal: string, at: Date = now) => lookupB.contextFor(resource, principal, agent, at);
  /** Statements run by one lookup. */
  const cost = async (principal: string, at: Date = now): Promise<number> => {
    const before = statements;
    await read(principal, at);
    return statements - before;
  };
  beforeAll(async () => {
    [replicaA, replicaB] = await openPostgresReplicas();
    // The lookup's prepared statement goes straight to the pg pool: count its calls there.
    const pool = (replicaB.dataSource.driver as unknown as { master: { query: (...args: unknown[]) => unknown } })
      .master;
    const query = pool.query.bind(pool);
    pool.query = (...args: unknown[]) => {
      statements += 1;
      return query(...args);
    };
    lookupB = new ExchangeLookup(replicaB.dataSource, replicaB.exchangeCache);
    service = randomUUID();
    set = randomUUID();
    agent = randomUUID();
    await sql(
      "INSERT INTO services (id, display_name, client_id, token_endpoint_auth_method, issuer_uri, authorization_endpoint, token_endpoint) VALUES ($1, 'Mail', 'c', 'none', 'https://idp.example.com', 'https://idp.example.com/a', 'https://idp.example.com/t')",
      [service],
    );
    await sql('INSERT INTO service_protected_resources (uri, service_id, position) VALUES ($1, $2, 0)', [
      resource,
      service,
    ]);
    await sql("INSERT INTO permission_sets (id, name) VALUES ($1, 'Mail')", [set]);
    await sql("INSERT INTO agents (id, display_name) VALUES ($1, 'Agent')", [agent]);
    // The first lookup starts the listener; from LISTEN on, B serves from memory.
    await read('nobody');
    expect(await eventually(() => replicaB.exchangeCache?.active === true)).toBe(true);
  });

  afterAll(async () => {
    await replicaA?.close();
    await replicaB?.close();
  });

  it('serves a complete context from memory after one read, and never a refusal', async () => {
    await grantAndSession('alice@example.com');
    await settled();
    expect(await cost('alice@example.com')).toBe(1);
    expect(await cost('alice@example.com')).toBe(0);
    expect((await read('alice@example.com'))?.delegations).toEqual([
      { permissionSetId: set, serviceId: service, scopes: ['read'] },
    ]);
    // No grant: read every time (a refusal is never kept).
    expect(await cost('nobody')).toBe(1);
    expect(await cost('nobody')).toBe(1);
  });

  it("drops a principal's contexts when another replica revokes the grant, and only theirs", async () => {
    const grant = await grantAndSession('bob@example.com');
    await settled();
    await grantAndSession('carol@example.com');
    await settled();
    for (const principal of ['bob@example.com', 'carol@example.com']) {
      await read(principal);
      expect(await cost(principal)).toBe(0);
    }
    await sql('DELETE FROM grants WHERE id = $1', [grant]);
    await settled();
    expect((await read('bob@example.com'))?.delegations).toEqual([]);
    expect(await cost('carol@example.com')).toBe(0);
  });

  it('drops a context when its delegations or its session change', async () => {
    const grant = await grantAndSession('dave@example.com');
    await settled();
    await read('dave@example.com');
    expect(await cost('dave@example.com')).toBe(0);
    await sql(`UPDATE grant_delegations SET scopes = '["read","write"]' WHERE grant_id = $1`, [grant]);
    await settled();
    expect((await read('dave@example.com'))?.delegations[0]?.scopes).toEqual(['read', 'write']);
    expect(await cost('dave@example.com')).toBe(0);
    await sql("UPDATE third_party_sessions SET token_type = 'DPoP' WHERE principal = $1", ['dave@example.com']);
    await settled();
    expect((await read('dave@example.com'))?.session?.tokenType).toBe('DPoP');
    await sql('DELETE FROM third_party_sessions WHERE principal = $1', ['dave@example.com']);
    await settled();
    expect((await read('dave@example.com'))?.session).toBeUndefined();
  });

  it('drops everything when a protected resource changes', async () => {
    await grantAndSession('erin@example.com');
    await settled();
    await read('erin@example.com');
    expect(await cost('erin@example.com')).toBe(0);
    await sql('UPDATE service_protected_resources SET position = 1 WHERE uri = $1', [resource]);
    await settled();
    expect(await cost('erin@example.com')).toBe(1);
  });

  it("stops serving a grant at its valid_until, by the caller's clock", async () => {
    await grantAndSession('frank@example.com', new Date(now.getTime() + 60_000));
    await settled();
    await read('frank@example.com');
    expect(await cost('frank@example.com', new Date(now.getTime() + 59_000))).toBe(0);
    // Past valid_until: read again, and the expired grant delegates nothing.
    const later = new Date(now.getTime() + 61_000);
    expect(await cost('frank@example.com', later)).toBe(1);
    expect((await read('frank@example.com', later))?.delegations).toEqual([]);
  });

  it('serves nothing from memory while the notification connection is down, and starts empty once it is back', async () => {
    await grantAndSession('grace@example.com');
    await settled();
    await read('grace@example.com');
    expect(await cost('grace@example.com')).toBe(0);
    await sql(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agent-identity-broker-listen' AND datname = current_database()",
    );
    // The loss is seen: every lookup reads the database meanwhile (nothing may be missed).
    expect(await eventually(() => replicaB.exchangeCache?.active === false)).toBe(true);
    // Once reconnected, it serves again, from an empty cache.
    expect(await eventually(() => replicaB.exchangeCache?.active === true)).toBe(true);
    expect(await cost('grace@example.com')).toBe(1);
    expect(await cost('grace@example.com')).toBe(0);
  });
});
