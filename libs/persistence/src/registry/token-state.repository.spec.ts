import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { eventually, LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { EnterpriseAuthorizationRepository } from './enterprise-authorization.repository';
import { RefreshTokenRepository } from './refresh-token.repository';
import { TokenStateRepository } from './token-state.repository';

const sha = (value: string): Buffer => createHash('sha256').update(value).digest();

describe.each(testBackends())('TokenStateRepository on $name', (backend) => {
  let database: Database;
  let state: TokenStateRepository;
  let refreshTokens: RefreshTokenRepository;
  let agent: string;
  const now = new Date('2026-11-26T12:00:00Z');
  const at = (ms: number): Date => new Date(now.getTime() + ms);

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    // As the providers build it: with the process's cache on PostgreSQL, none on PGlite.
    state = new TokenStateRepository(database.dataSource, database.tokenState);
    refreshTokens = new RefreshTokenRepository(database.dataSource);
    agent = randomUUID();
    await database.dataSource.query("INSERT INTO agents (id, display_name) VALUES ($1, 'Agent')", [agent]);
  });

  afterAll(async () => {
    await database?.close();
  });

  const grant = async (principal: string, createdAt: Date, validUntil: Date | null = null): Promise<string> => {
    const id = randomUUID();
    await database.dataSource.query(
      'INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)',
      [id, principal, agent, validUntil, createdAt],
    );
    return id;
  };

  it("stores a revocation once and reads it back (this process's next read sees it at once)", async () => {
    const jti = randomUUID();
    const key = { jti, familyId: undefined, principal: undefined, agentId: agent };
    expect(await state.accessTokenFacts(key, now)).toEqual({
      revoked: false,
      familyRevoked: false,
      enterprise: false,
      grant: undefined,
    });
    expect(await state.revokeAccessToken(jti, at(3_600_000))).toBe(true);
    expect(await state.revokeAccessToken(jti, at(3_600_000))).toBe(false);
    expect((await state.accessTokenFacts(key, now)).revoked).toBe(true);
  });

  it("reads the person's grant and the sid family, revoked or not", async () => {
    const createdAt = at(-60_000);
    const grantId = await grant('alice', createdAt);
    const familyId = randomUUID();
    await refreshTokens.issue({
      id: randomUUID(),
      familyId,
      tokenSha256: sha(`r-${familyId}`),
      agentId: agent,
      principal: 'alice',
      grantId,
      resources: [],
      scopes: ['read'],
      credentialSha256: null,
      clientIdUrl: null,
      dpopJkt: null,
      issuedAt: now,
      idleExpiresAt: at(86_400_000),
      familyExpiresAt: at(86_400_000),
    });
    const key = { jti: randomUUID(), familyId, principal: 'alice', agentId: agent };
    expect(await state.accessTokenFacts(key, now)).toEqual({
      revoked: false,
      familyRevoked: false,
      enterprise: false,
      grant: { validUntil: null, createdAt },
    });
    expect(await refreshTokens.revokeFamily(familyId, now)).toBe(true);
    state.familyRevoked(familyId);
    expect((await state.accessTokenFacts(key, now)).familyRevoked).toBe(true);
    expect((await state.refreshToken(sha(`r-${familyId}`)))?.revokedAt).toEqual(now);
    expect(await state.familyClient(familyId)).toEqual({ agentId: agent, clientIdUrl: null });
    expect(await state.refreshToken(sha('unknown'))).toBeUndefined();
  });

  it('reads an enterprise authorization as the sid: live, then revoked; a later token starts a new one, an older or replayed assertion none', async () => {
    const enterprise = new EnterpriseAuthorizationRepository(database.dataSource);
    const issue = {
      principal: 'erin',
      agentId: agent,
      issuer: 'https://idp.example',
      resourceUri: 'https://mcp.example/mcp',
      scopes: ['tools:read'],
      now,
      expiresAt: at(3_600_000),
      assertionIssuedAt: at(-10_000),
      spentUntil: at(300_000),
    };
    const assertion = () => ({ candidateId: randomUUID(), assertionSha256: randomBytes(32) });
    const recorded = await enterprise.record({ ...issue, ...assertion() });
    const first = recorded.outcome === 'recorded' ? recorded.id : '';
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    // The live row is extended, not duplicated: the next token carries the same sid.
    expect(await enterprise.record({ ...issue, ...assertion(), expiresAt: at(7_200_000) })).toEqual({
      outcome: 'recorded',
      id: first,
    });
    // An assertion presented again buys nothing.
    const presented = { ...issue, ...assertion() };
    expect((await enterprise.record(presented)).outcome).toBe('recorded');
    expect(await enterprise.record({ ...presented, candidateId: randomUUID() })).toEqual({ outcome: 'replayed' });
    const key = { jti: randomUUID(), familyId: first, principal: 'erin', agentId: agent };
    expect(await state.accessTokenFacts(key, now)).toEqual({
      revoked: false,
      familyRevoked: false,
      enterprise: true,
      grant: undefined,
    });
    await database.dataSource.query(
      "UPDATE enterprise_authorizations SET revoked_at = $2, revoked_by = 'erin' WHERE id = $1",
      [first, at(1_000)],
    );
    // Revoked by another process (raw SQL here): on PostgreSQL the table's trigger notifies this one's cache.
    await eventually(
      async () => (await state.accessTokenFacts(key, now)).familyRevoked,
      (revoked) => revoked,
      { waitingFor: 'the revocation to reach the cached facts' },
    );
    expect(await state.accessTokenFacts(key, now)).toMatchObject({ familyRevoked: true, enterprise: true });
    // An assertion issued before the revocation buys nothing; one issued after starts a new authorization.
    expect(await enterprise.record({ ...issue, ...assertion(), assertionIssuedAt: at(500) })).toEqual({
      outcome: 'revoked',
    });
    const second = await enterprise.record({ ...issue, ...assertion(), assertionIssuedAt: at(2_000) });
    expect(second).toEqual({ outcome: 'recorded', id: expect.any(String) as unknown });
    expect(second).not.toEqual({ outcome: 'recorded', id: first });
    const [row] = await database.dataSource.query<{ expires_at: Date; scopes: string[] }[]>(
      'SELECT expires_at, scopes FROM enterprise_authorizations WHERE id = $1',
      [first],
    );
    expect(row).toEqual({ expires_at: at(7_200_000), scopes: ['tools:read'] });
  });

  it('purges revocations of tokens that expired before the cutoff, and only those', async () => {
    const expired = randomUUID();
    const live = randomUUID();
    await state.revokeAccessToken(expired, at(-1_000));
    await state.revokeAccessToken(live, at(1_000));
    expect(await state.purgeExpired(now, 1_000)).toBeGreaterThanOrEqual(1);
    const rows = await database.dataSource.query<{ jti: string }[]>(
      'SELECT jti FROM revoked_access_tokens WHERE jti = ANY($1::uuid[])',
      [[expired, live]],
    );
    expect(rows.map((row) => row.jti)).toEqual([live]);
  });
});
