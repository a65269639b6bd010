import { createHash, randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { RefreshTokenRepository, type RefreshPresentation } from './refresh-token.repository';

const sha = (value: string): Buffer => createHash('sha256').update(value).digest();

describe.each(testBackends())('RefreshTokenRepository on $name', (backend) => {
  let database: Database;
  let tokens: RefreshTokenRepository;
  let agent: string;
  /** A service whose protected resources are the families' two resources, and a permission set bundling it. */
  let service: string;
  let permissionSet: string;
  const now = new Date('2026-11-26T12:00:00Z');
  const at = (ms: number): Date => new Date(now.getTime() + ms);
  const DAY = 86_400_000;

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    tokens = new RefreshTokenRepository(database.dataSource);
    agent = randomUUID();
    await database.dataSource.query("INSERT INTO agents (id, display_name) VALUES ($1, 'Agent')", [agent]);
    service = randomUUID();
    permissionSet = randomUUID();
    await database.dataSource.query(
      `INSERT INTO services (id, display_name, client_id, token_endpoint_auth_method, issuer_uri, authorization_endpoint, token_endpoint)
       VALUES ($1, 'Files', 'files', 'none', 'https://idp.example.com', 'https://idp.example.com/a', 'https://idp.example.com/t')`,
      [service],
    );
    await database.dataSource.query(
      "INSERT INTO service_protected_resources (uri, service_id, position) VALUES ('https://mcp.example.com', $1, 0), ('https://files.example.com', $1, 1)",
      [service],
    );
    await database.dataSource.query("INSERT INTO permission_sets (id, name) VALUES ($1, 'Files')", [permissionSet]);
  });

  afterAll(async () => {
    await database?.close();
  });

  /** A grant of `principal` to the agent (created at `grantCreatedAt`) and the first token `value` of a new family. */
  const family = async (
    principal: string,
    value: string,
    options: {
      familyExpiresAt?: Date;
      credential?: Buffer | null;
      clientIdUrl?: string | null;
      grantCreatedAt?: Date;
      dpopJkt?: string | null;
    } = {},
  ) => {
    const grantId = randomUUID();
    await database.dataSource.query(
      'INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) VALUES ($1, $2, $3, NULL, $4, $4)',
      [grantId, principal, agent, options.grantCreatedAt ?? now],
    );
    await database.dataSource.query(
      `INSERT INTO grant_delegations (grant_id, permission_set_id, service_id, scopes, position) VALUES ($1, $2, $3, '["files.read"]', 0)`,
      [grantId, permissionSet, service],
    );
    const first = await tokens.issue({
      id: randomUUID(),
      familyId: randomUUID(),
      tokenSha256: sha(value),
      agentId: agent,
      principal,
      grantId,
      resources: ['https://mcp.example.com', 'https://files.example.com'],
      scopes: ['read', 'offline_access'],
      credentialSha256: options.credential ?? null,
      clientIdUrl: options.clientIdUrl ?? null,
      dpopJkt: options.dpopJkt ?? null,
      issuedAt: now,
      idleExpiresAt: at(7 * DAY),
      familyExpiresAt: options.familyExpiresAt ?? at(30 * DAY),
    });
    return { grantId, first };
  };
  /** `value` presented by the agent (public, no document URL unless said) at `when`, its successor `next`. */
  const present = (value: string, next: string, when: Date = now, more: Partial<RefreshPresentation> = {}) =>
    tokens.rotate({
      tokenSha256: sha(value),
      now: when,
      agentId: agent,
      credentialSha256: null,
      clientIdUrl: null,
      dpopJkt: null,
      successor: { id: randomUUID(), tokenSha256: sha(next), idleExpiresAt: new Date(when.getTime() + 7 * DAY) },
      ...more,
    });

  it("refuses a DPoP-bound family's token without its key, leaving it current; with the key the successor stays bound", async () => {
    const key = 'k'.repeat(43);
    await family('grace', 'grace-1', { dpopJkt: key });
    expect(await present('grace-1', 'grace-x', at(1_000))).toMatchObject({ outcome: 'refused', reason: 'key' });
    expect(await present('grace-1', 'grace-y', at(1_000), { dpopJkt: 'o'.repeat(43) })).toMatchObject({
      outcome: 'refused',
      reason: 'key',
    });
    const rotated = await present('grace-1', 'grace-2', at(2_000), { dpopJkt: key });
    expect(rotated).toMatchObject({ outcome: 'rotated', successor: { dpopJkt: key } });
    expect(await present('grace-2', 'grace-z', at(3_000))).toMatchObject({ outcome: 'refused', reason: 'key' });
  });

  it('rotates a current token once, into a successor of the same family (same scopes and resources) that rotates in turn', async () => {
    const { first } = await family('alice', 'alice-1');
    const one = await present('alice-1', 'alice-2', at(1_000), {
      scopes: ['read'],
      resource: 'https://mcp.example.com',
    });
    expect(one.outcome).toBe('rotated');
    if (one.outcome !== 'rotated') return;
    // RFC 6749 §6: the new refresh token keeps the original scope; only the access token is narrowed.
    expect(one.successor).toMatchObject({
      familyId: first.familyId,
      principal: 'alice',
      agentId: agent,
      grantId: first.grantId,
      scopes: ['read', 'offline_access'],
      resources: first.resources,
    });
    expect(one.successor.issuedAt.getTime()).toBe(at(1_000).getTime());
    expect((await present('alice-2', 'alice-3', at(2_000))).outcome).toBe('rotated');
  });

  it('treats a rotated token presented again as reuse: the whole family is revoked, its newest token too', async () => {
    await family('bob', 'bob-1');
    expect((await present('bob-1', 'bob-2')).outcome).toBe('rotated');
    expect((await present('bob-1', 'bob-x', at(5_000))).outcome).toBe('reused');
    expect(await present('bob-2', 'bob-3', at(6_000))).toMatchObject({ outcome: 'refused', reason: 'inactive' });
    expect((await tokens.liveFamiliesByAgent('bob', at(6_000))).get(agent)).toBeUndefined();
  });

  describe('the reuse grace', () => {
    const grace = (...successors: string[]) => ({ grace: { windowMs: 5_000, successors: successors.map(sha) } });

    it('gives the same client presenting a token again within the window the successor it was rotated into, never a second one', async () => {
      const { first } = await family('grace-gina', 'grace-gina-1');
      const rotated = await present('grace-gina-1', 'grace-gina-2', at(1_000), grace('grace-gina-2'));
      expect(rotated.outcome).toBe('rotated');
      const again = await present('grace-gina-1', 'grace-gina-other', at(3_000), grace('unrelated', 'grace-gina-2'));
      expect(again).toMatchObject({ outcome: 'rotated', replayed: 1, successor: { familyId: first.familyId } });
      const stored = await database.dataSource.query<{ n: number }[]>(
        "SELECT count(*)::int AS n FROM refresh_tokens WHERE principal = 'grace-gina'",
      );
      expect(stored[0]?.n).toBe(2);
      expect((await present('grace-gina-2', 'grace-gina-3', at(4_000))).outcome).toBe('rotated');
    });

    it('treats a presentation after the window, under another credential, or once the successor moved on as a reuse', async () => {
      await family('grace-hank', 'grace-hank-1');
      expect((await present('grace-hank-1', 'grace-hank-2', at(1_000), grace('grace-hank-2'))).outcome).toBe('rotated');
      expect((await present('grace-hank-1', 'grace-hank-x', at(6_001), grace('grace-hank-2'))).outcome).toBe('reused');
      expect((await present('grace-hank-2', 'grace-hank-3', at(6_002))).outcome).toBe('refused');

      await family('grace-ivy', 'grace-ivy-1', { credential: sha('old secret') });
      const credential = { credentialSha256: sha('old secret') };
      expect(
        (await present('grace-ivy-1', 'grace-ivy-2', at(1_000), { ...credential, ...grace('grace-ivy-2') })).outcome,
      ).toBe('rotated');
      expect(
        (
          await present('grace-ivy-1', 'grace-ivy-x', at(2_000), {
            credentialSha256: sha('new secret'),
            ...grace('grace-ivy-2'),
          })
        ).outcome,
      ).toBe('reused');

      await family('grace-jack', 'grace-jack-1');
      expect((await present('grace-jack-1', 'grace-jack-2', at(1_000), grace('grace-jack-2'))).outcome).toBe('rotated');
      expect((await present('grace-jack-2', 'grace-jack-3', at(1_500), grace('grace-jack-3'))).outcome).toBe('rotated');
      // jack-2 is no longer current: the grace gives nothing, and jack-1 again is a reuse that ends jack-3 too.
      expect((await present('grace-jack-1', 'grace-jack-x', at(2_000), grace('grace-jack-2'))).outcome).toBe('reused');
      expect((await present('grace-jack-3', 'grace-jack-4', at(2_500))).outcome).toBe('refused');
    });

    it('gives nothing within the window when the family was revoked meanwhile', async () => {
      const { first } = await family('grace-kate', 'grace-kate-1');
      expect((await present('grace-kate-1', 'grace-kate-2', at(1_000), grace('grace-kate-2'))).outcome).toBe('rotated');
      expect(await tokens.revokeFamily(first.familyId, at(1_500))).toBe(true);
      expect(await present('grace-kate-1', 'grace-kate-x', at(2_000), grace('grace-kate-2'))).toMatchObject({
        outcome: 'refused',
        reason: 'inactive',
      });
    });
  });

  it('lets exactly one of many concurrent presentations of one token rotate it', async () => {
    await family('carol', 'carol-1');
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => present('carol-1', `carol-2-${i}`)));
    expect(outcomes.filter((o) => o.outcome === 'rotated')).toHaveLength(1);
    // The first to find it rotated reports the reuse and ends the family (the winner's successor included);
    // those after it find the family revoked.
    expect(outcomes.filter((o) => o.outcome === 'reused')).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome === 'refused' && o.reason === 'inactive')).toHaveLength(4);
    expect((await tokens.liveFamiliesByAgent('carol', now)).get(agent)).toBeUndefined();
    const stored = await database.dataSource.query<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM refresh_tokens WHERE principal = 'carol'",
    );
    expect(stored[0]?.n).toBe(2);
  });

  it('refuses a token past its idle or its absolute expiry, and caps a successor by the family expiry', async () => {
    await family('dave', 'dave-1', { familyExpiresAt: at(10 * DAY) });
    expect(await present('dave-1', 'dave-2', at(8 * DAY))).toMatchObject({ outcome: 'refused', reason: 'inactive' });
    await family('dave-b', 'dave-b1', { familyExpiresAt: at(10 * DAY) });
    const rotated = await present('dave-b1', 'dave-b2', at(6 * DAY));
    expect(rotated.outcome === 'rotated' && rotated.successor.idleExpiresAt.getTime()).toBe(at(10 * DAY).getTime());
    expect(await present('dave-b2', 'dave-b3', at(10 * DAY))).toMatchObject({ outcome: 'refused', reason: 'inactive' });
  });

  it('refuses a narrowing beyond the token, leaving it current; knows nothing of an unknown token', async () => {
    await family('erin', 'erin-1');
    expect(await present('erin-1', 'erin-x', now, { scopes: ['write'] })).toMatchObject({
      outcome: 'refused',
      reason: 'scope',
    });
    expect(await present('erin-1', 'erin-y', now, { resource: 'https://other.example.com' })).toMatchObject({
      outcome: 'refused',
      reason: 'resource',
    });
    expect((await present('erin-1', 'erin-2')).outcome).toBe('rotated');
    expect(await present('never-issued', 'nope')).toMatchObject({ outcome: 'refused', reason: 'unknown' });
  });

  it('is bound to the client, its credential and its document URL: another presenter changes nothing', async () => {
    await family('frank', 'frank-1', { credential: sha('secret-1') });
    expect(
      await present('frank-1', 'x', now, { agentId: randomUUID(), credentialSha256: sha('secret-1') }),
    ).toMatchObject({ outcome: 'refused', reason: 'client' });
    // The agent's credential was rotated since: the family is dead for it.
    expect(await present('frank-1', 'x', now, { credentialSha256: sha('secret-2') })).toMatchObject({
      outcome: 'refused',
      reason: 'credential',
    });
    expect((await present('frank-1', 'frank-2', now, { credentialSha256: sha('secret-1') })).outcome).toBe('rotated');
    await family('frank-doc', 'doc-1', { clientIdUrl: 'https://client.example.com/meta.json' });
    expect(await present('doc-1', 'x')).toMatchObject({ outcome: 'refused', reason: 'client' });
    expect(await tokens.holderOf(sha('doc-1'))).toEqual({
      agentId: agent,
      clientIdUrl: 'https://client.example.com/meta.json',
    });
    expect(
      (await present('doc-1', 'doc-2', now, { clientIdUrl: 'https://client.example.com/meta.json' })).outcome,
    ).toBe('rotated');
  });

  it('ends with its grant (deleted, expired, or expired and granted again) or its agent', async () => {
    const { grantId } = await family('gina', 'gina-1');
    expect((await tokens.liveFamiliesByAgent('gina', now)).get(agent)).toBe(1);
    await database.dataSource.query('DELETE FROM grants WHERE id = $1', [grantId]);
    expect(await present('gina-1', 'gina-2')).toMatchObject({ outcome: 'refused', reason: 'unknown' });

    const expiring = await family('hank', 'hank-1');
    await database.dataSource.query('UPDATE grants SET valid_until = $2 WHERE id = $1', [expiring.grantId, at(1_000)]);
    expect(await present('hank-1', 'hank-2', at(2_000))).toMatchObject({ outcome: 'refused', reason: 'grant' });
    // Granted again after expiring: same row, a newer created_at; the token from before stays dead.
    await database.dataSource.query('UPDATE grants SET valid_until = NULL, created_at = $2 WHERE id = $1', [
      expiring.grantId,
      at(3_000),
    ]);
    expect(await present('hank-1', 'hank-2', at(4_000))).toMatchObject({ outcome: 'refused', reason: 'grant' });
  });

  it('purges the rows of families whose absolute expiry passed, rotated ones included, and nothing else', async () => {
    await family('judy', 'judy-1', { familyExpiresAt: at(2 * DAY) });
    expect((await present('judy-1', 'judy-2', at(DAY))).outcome).toBe('rotated');
    await family('kim', 'kim-1', { familyExpiresAt: at(40 * DAY) });
    const rows = async (principal: string) =>
      (
        await database.dataSource.query<{ n: number }[]>(
          'SELECT count(*)::int AS n FROM refresh_tokens WHERE principal = $1',
          [principal],
        )
      )[0]?.n;
    expect(await rows('judy')).toBe(2);
    // Before the family's end nothing goes; after it, both of judy's rows, in batches of one.
    expect(await tokens.purgeEnded(at(2 * DAY - 1), 10)).toBe(0);
    expect(await tokens.purgeEnded(at(2 * DAY + 1), 1)).toBe(1);
    expect(await tokens.purgeEnded(at(2 * DAY + 1), 1)).toBe(1);
    expect(await rows('judy')).toBe(0);
    expect(await rows('kim')).toBe(1);
  });

  it('revokes a family only for the client it was issued to', async () => {
    const { first } = await family('ivy', 'ivy-1');
    expect(await tokens.familyOf(sha('ivy-1'), randomUUID())).toBeUndefined();
    expect(await tokens.familyOf(sha('ivy-1'), agent)).toBe(first.familyId);
    expect(await tokens.revokeFamily(first.familyId, now)).toBe(true);
    expect(await tokens.revokeFamily(first.familyId, now)).toBe(false);
    expect(await present('ivy-1', 'ivy-2')).toMatchObject({ outcome: 'refused', reason: 'inactive' });
  });
});
