import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { EnterpriseAuthorizationRepository, type EnterpriseIssue } from './enterprise-authorization.repository';

describe.each(testBackends())('EnterpriseAuthorizationRepository on $name', (backend) => {
  let database: Database;
  let repository: EnterpriseAuthorizationRepository;
  let mail: string;
  let files: string;
  const now = new Date('2026-11-26T12:00:00Z');
  const at = (ms: number): Date => new Date(now.getTime() + ms);

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    repository = new EnterpriseAuthorizationRepository(database.dataSource);
    mail = randomUUID();
    files = randomUUID();
    await database.dataSource.query(
      "INSERT INTO agents (id, display_name, logo_url) VALUES ($1, 'Mail Agent', 'https://cdn.example/mail.png'), ($2, 'Files Agent', NULL)",
      [mail, files],
    );
    await database.dataSource.query(
      `INSERT INTO protected_resources (id, display_name, resource_uri, scopes, created_at, updated_at)
       VALUES ($1, 'Mail MCP', 'https://mail.example/mcp', '[{"scope": "mail.read", "description": "Read your mail"}]', $2, $2)`,
      [randomUUID(), now],
    );
  });

  afterAll(async () => {
    await database?.close();
  });

  const record = async (issue: Partial<EnterpriseIssue> & Pick<EnterpriseIssue, 'principal'>): Promise<string> => {
    const recorded = await repository.record({
      candidateId: randomUUID(),
      agentId: mail,
      issuer: 'https://idp.example',
      resourceUri: 'https://mail.example/mcp',
      scopes: ['mail.read'],
      now: at(-60_000),
      expiresAt: at(3_600_000),
      assertionIssuedAt: at(-70_000),
      assertionSha256: randomBytes(32),
      spentUntil: at(300_000),
      ...issue,
    });
    if (recorded.outcome !== 'recorded') throw new Error(`not recorded: ${recorded.outcome}`);
    return recorded.id;
  };

  it("lists a person's and an agent's live authorizations, newest first, with the agent and the registered resource", async () => {
    const older = await record({ principal: 'ann', now: at(-120_000) });
    const newer = await record({
      principal: 'ann',
      agentId: files,
      resourceUri: 'https://files.example/mcp',
      scopes: ['files.read', 'files.write'],
      now: at(-30_000),
    });
    await record({ principal: 'ben' });
    // Not live: expired, or revoked.
    await record({ principal: 'ann', issuer: 'https://other-idp.example', expiresAt: at(-1) });
    const revoked = await record({ principal: 'ann', issuer: 'https://third-idp.example' });
    expect(await repository.revoke(revoked, { principal: 'ann' }, 'ann', now)).toBeDefined();

    const ann = await repository.live({ principal: 'ann' }, now);
    expect(ann.map((row) => row.id)).toEqual([newer, older]);
    expect(ann[0]).toEqual({
      id: newer,
      principal: 'ann',
      agentId: files,
      agentDisplayName: 'Files Agent',
      agentLogoUrl: null,
      issuer: 'https://idp.example',
      resourceUri: 'https://files.example/mcp',
      resourceDisplayName: null,
      resourceScopes: [],
      scopes: ['files.read', 'files.write'],
      firstIssuedAt: at(-30_000),
      lastIssuedAt: at(-30_000),
      expiresAt: at(3_600_000),
      revokedAt: null,
      revokedBy: null,
    });
    expect(ann[1]).toMatchObject({
      agentDisplayName: 'Mail Agent',
      agentLogoUrl: 'https://cdn.example/mail.png',
      resourceDisplayName: 'Mail MCP',
      resourceScopes: [{ scope: 'mail.read', description: 'Read your mail' }],
    });
    expect((await repository.live({ agentId: mail }, now)).map((row) => row.principal).sort()).toEqual(['ann', 'ben']);
    expect((await repository.live({ principal: 'ben', agentId: mail }, now)).map((row) => row.principal)).toEqual([
      'ben',
    ]);
    expect(await repository.live({ principal: 'ben', agentId: files }, now)).toEqual([]);
    // At its expiry it is no longer live.
    expect(await repository.live({ principal: 'ann' }, at(3_600_000))).toEqual([]);
  });

  it('revokes a live authorization of its owner once, with the work of its transaction', async () => {
    const id = await record({ principal: 'cat' });
    // Another owner's, an unknown id: nothing revoked.
    expect(await repository.revoke(id, { principal: 'dan' }, 'dan', now)).toBeUndefined();
    expect(await repository.revoke(id, { agentId: files }, 'admin', now)).toBeUndefined();
    expect(await repository.revoke(randomUUID(), {}, 'admin', now)).toBeUndefined();
    // The transaction's work failing rolls the revocation back.
    await expect(
      repository.revoke(id, { principal: 'cat' }, 'cat', now, () => Promise.reject(new Error('event refused'))),
    ).rejects.toThrow('event refused');
    expect((await repository.live({ principal: 'cat' }, now)).map((row) => row.id)).toEqual([id]);

    let seen: unknown;
    const revoked = await repository.revoke(
      id,
      { principal: 'cat', agentId: mail },
      'cat',
      now,
      async (row, manager) => {
        // Inside the transaction: the row reads as revoked there.
        seen = (
          await manager.query<{ revoked_at: Date }[]>(
            'SELECT revoked_at FROM enterprise_authorizations WHERE id = $1',
            [row.id],
          )
        )[0]?.revoked_at;
      },
    );
    expect(revoked).toMatchObject({
      id,
      principal: 'cat',
      agentId: mail,
      issuer: 'https://idp.example',
      resourceUri: 'https://mail.example/mcp',
      revokedAt: now,
      revokedBy: 'cat',
    });
    expect(seen).toEqual(now);
    expect(await repository.live({ principal: 'cat' }, now)).toEqual([]);
    // Already revoked: nothing more.
    expect(await repository.revoke(id, { principal: 'cat' }, 'cat', at(1_000))).toBeUndefined();
  });

  it('does not revoke an expired authorization', async () => {
    const id = await record({ principal: 'eve', expiresAt: at(-1) });
    expect(await repository.revoke(id, { principal: 'eve' }, 'eve', now)).toBeUndefined();
  });
});
