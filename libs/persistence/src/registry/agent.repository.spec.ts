import { randomUUID } from 'node:crypto';
import { RegistryError, SystemClock } from '@broker/domain';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { AgentRepository } from './agent.repository';

describe.each(testBackends())('AgentRepository.list on $name', (backend) => {
  let database: Database;
  let agents: AgentRepository;

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    agents = new AgentRepository(
      database.dataSource,
      database.clientCache,
      new SystemClock(),
      new Transactions(database.dataSource),
      new ExchangeChanges(database.exchangeCache, database.tokenState),
    );
  });

  afterAll(async () => {
    await database?.close();
  });

  it('lists every agent oldest first, each exactly as findById reads it (assignments in order, timestamps, JSON columns)', async () => {
    const sets = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of sets)
      await database.dataSource.query('INSERT INTO permission_sets (id, name) VALUES ($1, $2)', [id, `set ${id}`]);
    const created = new Date('2026-03-01T10:00:00.123Z');
    const full = await agents.create(
      randomUUID(),
      {
        displayName: 'Full',
        description: 'Every field',
        canonicalId: 'full-agent',
        clientId: 'upstream',
        logoUrl: 'https://cdn.example.com/a.png',
        governanceUrl: 'https://example.com/g',
        userDocumentationUrl: 'https://example.com/d',
        agentInterfaceUrl: 'https://agent.example.com',
        redirectUris: ['https://agent.example.com/cb', 'http://127.0.0.1/cb'],
        allowedScopes: ['a', 'b'],
        allowedResources: ['https://mcp.example.com/mcp', 'https://tools.example.com/'],
        clientUris: ['https://agent.example.com'],
        dpopBoundAccessTokens: true,
        permissionSets: [
          { permissionSetId: sets[2] as string, requirementType: 'optional' },
          { permissionSetId: sets[0] as string, requirementType: 'mandatory' },
          { permissionSetId: sets[1] as string, requirementType: 'require_all_scopes' },
        ],
      },
      created,
    );
    // Same creation time: ordered by id. Microseconds from SQL's clock read as milliseconds, as findById does.
    const [later, earlierId] = ['00000000-0000-4000-8000-00000000000b', '00000000-0000-4000-8000-00000000000a'];
    for (const id of [later, earlierId]) {
      await database.dataSource.query(
        "INSERT INTO agents (id, display_name, created_at, updated_at) VALUES ($1, 'Bare', '2026-03-01T09:00:00.456789Z', '2026-03-02T00:00:00.999999Z')",
        [id],
      );
    }

    const listed = await agents.list();
    expect(listed.map((agent) => agent.id)).toEqual([earlierId, later, full.id]);
    for (const agent of listed) expect(agent).toEqual(await agents.findById(agent.id));
    expect(listed[2]).toEqual(full);
    // The token endpoint's client lookup reads the same agent (RFC 9449 §5.2 policy included).
    expect((await agents.findClient(full.id))?.agent).toEqual(full);
    expect(full.dpopBoundAccessTokens).toBe(true);
    expect(listed[0]).toMatchObject({
      permissionSets: [],
      redirectUris: [],
      allowedResources: [],
      dpopBoundAccessTokens: null,
      createdAt: new Date('2026-03-01T09:00:00.456Z'),
      updatedAt: new Date('2026-03-02T00:00:00.999Z'),
    });
  });

  it('refuses a second agent with the same canonical_id with the registry rule, not an API code', async () => {
    const input = {
      displayName: 'Twin',
      description: null,
      canonicalId: 'twin-agent',
      clientId: null,
      logoUrl: null,
      governanceUrl: null,
      userDocumentationUrl: null,
      agentInterfaceUrl: null,
      redirectUris: [],
      allowedScopes: [],
      allowedResources: [],
      clientUris: [],
      dpopBoundAccessTokens: false,
      permissionSets: [],
    };
    await agents.create(randomUUID(), input, new Date());
    const refused = agents.create(randomUUID(), input, new Date());
    await expect(refused).rejects.toBeInstanceOf(RegistryError);
    await expect(refused).rejects.toMatchObject({
      code: 'duplicate_canonical_id',
      message: 'canonical_id "twin-agent" is already used by another agent',
    });
  });

  it('reads a suspension the same way everywhere, keeps it across a replacement, and resuming clears only it', async () => {
    const input = {
      displayName: 'Suspended',
      description: null,
      canonicalId: null,
      clientId: null,
      logoUrl: null,
      governanceUrl: null,
      userDocumentationUrl: null,
      agentInterfaceUrl: null,
      redirectUris: [],
      allowedScopes: ['a'],
      allowedResources: [],
      clientUris: [],
      dpopBoundAccessTokens: null,
      permissionSets: [],
    };
    const created = await agents.create(randomUUID(), input, new Date('2026-03-01T10:00:00.000Z'));
    expect(created.suspension).toBeNull();
    const at = new Date('2026-03-02T11:00:00.123Z');
    expect(await agents.suspend(created.id, 'alice@example.com', 'leaked', at)).toEqual({
      began: true,
      suspension: { suspendedAt: at, suspendedBy: 'alice@example.com', reason: 'leaked' },
    });
    const again = await agents.suspend(created.id, 'bob@example.com', null, new Date());
    expect(again).toEqual({
      began: false,
      suspension: { suspendedAt: at, suspendedBy: 'alice@example.com', reason: 'leaked' },
    });
    const read = await agents.findById(created.id);
    expect(read?.suspension).toEqual(again?.suspension);
    expect((await agents.list()).find((agent) => agent.id === created.id)).toEqual(read);
    expect((await agents.findClient(created.id))?.agent).toEqual(read);
    const replaced = await agents.replace(created.id, { ...input, displayName: 'Renamed' }, new Date());
    expect(replaced?.suspension).toEqual(again?.suspension);
    expect(await agents.resume(created.id)).toEqual(again?.suspension);
    expect(await agents.resume(created.id)).toBeNull();
    const resumed = await agents.findById(created.id);
    expect(resumed).toEqual({ ...replaced, suspension: null });
    expect((await agents.findClient(created.id))?.agent.suspension).toBeNull();
    expect(await agents.suspend(randomUUID(), 'alice@example.com', null, new Date())).toBeUndefined();
    expect(await agents.resume(randomUUID())).toBeUndefined();
  });

  it('lists nothing when there are no agents', async () => {
    await database.dataSource.query('DELETE FROM agents');
    expect(await agents.list()).toEqual([]);
  });
});
