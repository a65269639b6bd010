import { createHash, randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { RefreshTokenRepository, type NewRefreshToken } from './refresh-token.repository';

const sha = (value: string): Buffer => createHash('sha256').update(value).digest();

describe.each(testBackends())('RefreshTokenRepository on $name', (backend) => {
  let database: Database;
  let tokens: RefreshTokenRepository;
  let agent: string;
  const now = new Date('2026-11-26T12:00:00Z');
  const at = (ms: number): Date => new Date(now.getTime() + ms);
  const DAY = 86_400_000;

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    tokens = new RefreshTokenRepository(database.dataSource);
    agent = randomUUID();
    await database.dataSource.query("INSERT INTO agents (id, display_name) VALUES ($1, 'Agent')", [agent]);
  });

  afterAll(async () => {
    await database?.close();
  });

  /** A grant of `principal` to the agent and the first token `value` of a new family. */
  const family = async (principal: string, value: string, familyExpiresAt: Date = at(30 * DAY)) => {
    const grantId = randomUUID();
    await database.dataSource.query('INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) VALUES ($1, $2, $3, NULL, $4, $4)', [grantId, principal, agent, now]);
    const first = await tokens.issue({ id: randomUUID(), familyId: randomUUID(), tokenSha256: sha(value), agentId: agent, principal, grantId, resources: ['https://mcp.example.com'], scopes: ['read', 'offline_access'], credentialSha256: null, issuedAt: now, idleExpiresAt: at(7 * DAY), familyExpiresAt });
    return { grantId, first };
  };
  const next = (value: string, issuedAt: Date = now, idleExpiresAt: Date = at(7 * DAY), scopes: string[] = ['read', 'offline_access']): NewRefreshToken => ({ id: randomUUID(), tokenSha256: sha(value), resources: ['https://mcp.example.com'], scopes, issuedAt, idleExpiresAt });

  it('rotates a current token once, into a successor of the same family that rotates in turn', async () => {
    const { first } = await family('alice', 'alice-1');
    const one = await tokens.rotate(sha('alice-1'), at(1_000), () => next('alice-2', at(1_000), at(1_000 + 7 * DAY), ['read']));
    expect(one.outcome).toBe('rotated');
    if (one.outcome !== 'rotated') return;
    expect(one.previous.id).toBe(first.id);
    expect(one.successor).toMatchObject({ familyId: first.familyId, principal: 'alice', agentId: agent, grantId: first.grantId, scopes: ['read'] });
    expect((await tokens.rotate(sha('alice-2'), at(2_000), () => next('alice-3'))).outcome).toBe('rotated');
  });

  it('treats a rotated token presented again as reuse: the whole family is revoked, its newest token too', async () => {
    await family('bob', 'bob-1');
    expect((await tokens.rotate(sha('bob-1'), now, () => next('bob-2'))).outcome).toBe('rotated');
    expect((await tokens.rotate(sha('bob-1'), at(5_000), () => next('bob-x'))).outcome).toBe('reused');
    expect((await tokens.rotate(sha('bob-2'), at(6_000), () => next('bob-3'))).outcome).toBe('inactive');
    expect((await tokens.liveFamiliesByAgent('bob', at(6_000))).get(agent)).toBeUndefined();
  });

  it('lets exactly one of many concurrent presentations of one token rotate it', async () => {
    await family('carol', 'carol-1');
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => tokens.rotate(sha('carol-1'), now, () => next(`carol-2-${i}`))));
    expect(outcomes.filter((o) => o.outcome === 'rotated')).toHaveLength(1);
    // The others found it rotated: a reuse, which ends the family (the winner's successor included).
    expect(outcomes.filter((o) => o.outcome === 'reused').length).toBeGreaterThan(0);
    expect((await tokens.liveFamiliesByAgent('carol', now)).get(agent)).toBeUndefined();
  });

  it('refuses a token past its idle or its absolute expiry, and keeps the family expiry on successors', async () => {
    await family('dave', 'dave-1', at(10 * DAY));
    expect((await tokens.rotate(sha('dave-1'), at(8 * DAY), () => next('dave-2'))).outcome).toBe('inactive');
    await family('dave-b', 'dave-b1', at(10 * DAY));
    const rotated = await tokens.rotate(sha('dave-b1'), at(6 * DAY), () => next('dave-b2', at(6 * DAY), at(13 * DAY)));
    expect(rotated.outcome === 'rotated' && rotated.successor.idleExpiresAt.getTime()).toBe(at(10 * DAY).getTime());
    expect((await tokens.rotate(sha('dave-b2'), at(10 * DAY), () => next('dave-b3'))).outcome).toBe('inactive');
  });

  it('leaves the token unrotated when the successor is refused, and knows nothing of an unknown token', async () => {
    await family('erin', 'erin-1');
    await expect(tokens.rotate(sha('erin-1'), now, () => Promise.reject(new Error('the grant was revoked')))).rejects.toThrow('the grant was revoked');
    expect((await tokens.rotate(sha('erin-1'), now, () => next('erin-2'))).outcome).toBe('rotated');
    expect((await tokens.rotate(sha('never-issued'), now, () => next('nope'))).outcome).toBe('unknown');
  });

  it('ends with its grant or its agent, and revokes a family only for the client it was issued to', async () => {
    const { grantId } = await family('frank', 'frank-1');
    expect((await tokens.liveFamiliesByAgent('frank', now)).get(agent)).toBe(1);
    await database.dataSource.query('DELETE FROM grants WHERE id = $1', [grantId]);
    expect((await tokens.rotate(sha('frank-1'), now, () => next('frank-2'))).outcome).toBe('unknown');

    const { first } = await family('grace', 'grace-1');
    expect(await tokens.familyOf(sha('grace-1'), randomUUID())).toBeUndefined();
    expect(await tokens.familyOf(sha('grace-1'), agent)).toBe(first.familyId);
    expect(await tokens.revokeFamily(first.familyId, now)).toBe(true);
    expect(await tokens.revokeFamily(first.familyId, now)).toBe(false);
    expect((await tokens.rotate(sha('grace-1'), now, () => next('grace-2'))).outcome).toBe('inactive');
  });
});
