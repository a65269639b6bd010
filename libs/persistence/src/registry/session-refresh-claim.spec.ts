import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { GrantRepository } from './grant.repository';
import { SessionRepository, type RefreshClaim } from './session.repository';

const MINUTE = 60_000;

describe.each(testBackends())('SessionRepository.claimDueForRefresh (proactive refresh) on $name', (backend) => {
  let database: Database;
  let sessions: SessionRepository;
  let grants: GrantRepository;
  let mail: string;
  let files: string;
  let set: string;
  const now = new Date('2026-03-01T10:00:00Z');
  const at = (ms: number): Date => new Date(now.getTime() + ms);
  const claim = (overrides: Partial<RefreshClaim> = {}): RefreshClaim => ({
    now,
    horizon: at(5 * MINUTE),
    leaseUntil: at(MINUTE),
    limit: 100,
    skipServiceIds: [],
    ...overrides,
  });

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    sessions = new SessionRepository(
      database.dataSource,
      backend.name,
      new Transactions(database.dataSource),
      new ExchangeChanges(database.exchangeCache, database.tokenState),
    );
    grants = new GrantRepository(
      database.dataSource,
      new Transactions(database.dataSource),
      new ExchangeChanges(database.exchangeCache, database.tokenState),
    );
    [mail, files] = [await service('mail'), await service('files')];
    set = randomUUID();
    await database.dataSource.query('INSERT INTO permission_sets (id, name) VALUES ($1, $2)', [set, 'set']);
  });

  beforeEach(async () => {
    await database.dataSource.query('DELETE FROM third_party_sessions');
    await database.dataSource.query('DELETE FROM grants');
  });

  afterAll(async () => {
    await database?.close();
  });

  async function service(name: string): Promise<string> {
    const id = randomUUID();
    await database.dataSource.query(
      `INSERT INTO services (id, display_name, client_id, token_endpoint_auth_method, issuer_uri, authorization_endpoint, token_endpoint, scopes, created_at, updated_at)
       VALUES ($1, $2, 'client', 'none', 'https://idp.example.com', 'https://idp.example.com/a', 'https://idp.example.com/t', '[]', $3, $3)`,
      [id, name, now],
    );
    return id;
  }

  /** A session of `principal` with `serviceId`: by default due (expires in a minute, written an hour ago), with a refresh token. */
  async function session(
    principal: string,
    serviceId: string,
    shape: { expiresIn?: number; writtenAgo?: number; refreshToken?: boolean; refreshExpiresIn?: number | null } = {},
  ): Promise<void> {
    await sessions.upsert({
      id: randomUUID(),
      principal,
      serviceId,
      accessTokenEnvelope: randomBytes(40),
      refreshTokenEnvelope: shape.refreshToken === false ? null : randomBytes(40),
      tokenType: 'Bearer',
      scopes: [],
      accessTokenExpiresAt: at(shape.expiresIn ?? MINUTE),
      refreshTokenExpiresAt:
        shape.refreshExpiresIn === undefined || shape.refreshExpiresIn === null ? null : at(shape.refreshExpiresIn),
      initiatedAt: at(-(shape.writtenAgo ?? 60 * MINUTE)),
      updatedAt: at(-(shape.writtenAgo ?? 60 * MINUTE)),
    });
  }

  /** An agent whose grant from `principal` delegates `serviceIds`, valid until `validUntil` (null: no end). */
  async function grant(
    principal: string,
    serviceIds: readonly string[],
    validUntil: Date | null = null,
  ): Promise<void> {
    const agent = randomUUID();
    await database.dataSource.query('INSERT INTO agents (id, display_name) VALUES ($1, $2)', [agent, `agent ${agent}`]);
    await grants.upsert(
      randomUUID(),
      principal,
      agent,
      validUntil,
      serviceIds.map((serviceId) => ({ permissionSetId: set, serviceId, scopes: [] })),
      [],
      now,
    );
  }

  const names = (claimed: readonly { principal: string; serviceId: string }[]): string[] =>
    claimed.map((c) => `${c.principal}/${c.serviceId === mail ? 'mail' : 'files'}`);

  it('claims due sessions with a refresh token and a dependent agent, earliest expiry first; nothing else', async () => {
    await session('due', mail);
    await grant('due', [mail, files]);
    await session('expired-already', mail, { expiresIn: -MINUTE });
    await grant('expired-already', [mail, files]);
    await session('due', files, { expiresIn: 2 * MINUTE });
    await session('no-grant', mail);
    await session('grant-lapsed', mail);
    await grant('grant-lapsed', [mail], now);
    await session('grant-lapses-later', mail, { expiresIn: 90_000 });
    await grant('grant-lapses-later', [mail], at(1));
    await session('other-service-delegated', mail);
    await grant('other-service-delegated', [files]);
    await session('not-due', mail, { expiresIn: 6 * MINUTE });
    await grant('not-due', [mail]);
    // A 90-second token written 30 seconds ago: within the window, but not past half its lifetime.
    await session('young', mail, { writtenAgo: 30_000 });
    await grant('young', [mail]);
    await session('no-refresh-token', mail, { refreshToken: false });
    await grant('no-refresh-token', [mail]);
    await session('refresh-token-expired', mail, { refreshExpiresIn: 0 });
    await grant('refresh-token-expired', [mail]);
    await session('marked', mail);
    await grant('marked', [mail]);
    await database.dataSource.query(
      "UPDATE third_party_sessions SET needs_reauthentication = true WHERE principal = 'marked'",
    );

    const claimed = await sessions.claimDueForRefresh(claim());
    expect(names(claimed)).toEqual(['expired-already/mail', 'due/mail', 'grant-lapses-later/mail', 'due/files']);
    // The claim is not a session write: the versions are the rows' own.
    const versions = await database.dataSource.query<{ principal: string; version: number }[]>(
      "SELECT principal, version FROM third_party_sessions WHERE principal = 'due'",
    );
    expect(claimed.filter((c) => c.principal === 'due').map((c) => c.version)).toEqual(
      versions.map((row) => row.version),
    );
    expect(versions.every((row) => row.version === 1)).toBe(true);
  });

  it('leases what it claimed: not claimed again until the lease ends; skipped services and the limit are honoured', async () => {
    for (const principal of ['a', 'b', 'c']) {
      await session(principal, mail, { expiresIn: principal === 'a' ? 10_000 : MINUTE });
      await session(principal, files);
      await grant(principal, [mail, files]);
    }
    const first = names(await sessions.claimDueForRefresh(claim({ skipServiceIds: [files], limit: 2 })));
    expect(first).toEqual(['a/mail', expect.stringMatching(/^[bc]\/mail$/)]);
    expect(await sessions.claimDueForRefresh(claim({ skipServiceIds: [files, mail] }))).toEqual([]);
    const rest = names(await sessions.claimDueForRefresh(claim()));
    expect(rest).toHaveLength(4);
    expect(new Set([...first, ...rest])).toEqual(
      new Set(['a/mail', 'b/mail', 'c/mail', 'a/files', 'b/files', 'c/files']),
    );
    // Everything is leased until now + 1 minute.
    expect(await sessions.claimDueForRefresh(claim({ now: at(MINUTE - 1) }))).toEqual([]);
    expect(
      await sessions.claimDueForRefresh(
        claim({ now: at(MINUTE + 1), horizon: at(6 * MINUTE), leaseUntil: at(2 * MINUTE) }),
      ),
    ).toHaveLength(6);
  });

  it('two concurrent claims never return the same session', async () => {
    for (let i = 0; i < 20; i += 1) {
      await session(`p${i}`, mail, { expiresIn: MINUTE + i });
      await grant(`p${i}`, [mail]);
    }
    const [first, second] = await Promise.all([
      sessions.claimDueForRefresh(claim({ limit: 12 })),
      sessions.claimDueForRefresh(claim({ limit: 12 })),
    ]);
    const all = [...first, ...second].map((c) => c.principal);
    expect(all).toHaveLength(20);
    expect(new Set(all).size).toBe(20);
  });
});
