import { randomUUID } from 'node:crypto';
import { RegistryError } from '@broker/domain';
import { createLogger } from '@broker/http';
import {
  eventually,
  FrozenClock,
  LogCapture,
  postgresServerUrl,
  testBackends,
  testConfig,
  openPostgresReplicas,
  listenSessions,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { runCountingQueries } from '../query-count';
import { PermissionSetRepository, type PermissionSetInput } from './permission-set.repository';
import { ProtectedResourceRepository, type ProtectedResourceInput } from './protected-resource.repository';
import { ServiceRepository, type ServiceInput } from './service.repository';

function resource(resourceUri: string, scopes: string[] = ['files.read', 'files.write']): ProtectedResourceInput {
  return {
    displayName: 'Files MCP',
    description: null,
    logoUrl: null,
    resourceUri,
    scopes: scopes.map((scope) => ({ scope, description: `May ${scope}` })),
  };
}

function service(protectedResources: string[]): ServiceInput {
  return {
    displayName: 'Mail',
    description: null,
    logoUrl: null,
    clientId: 'mail-client',
    tokenEndpointAuthMethod: 'none',
    issuerUri: 'https://mail.example.com',
    authorizationEndpoint: 'https://mail.example.com/authorize',
    tokenEndpoint: 'https://mail.example.com/token',
    scopes: [],
    protectedResources,
  };
}

function set(name: string, resourceScopes: PermissionSetInput['resourceScopes']): PermissionSetInput {
  return { name, description: '', serviceScopes: [], resourceScopes };
}

const uri = (): string => `https://mcp-${randomUUID()}.example.com/mcp`;

// The repository names the registry rule; only the admin API picks the wire code.
describe.each(testBackends())('ProtectedResourceRepository on $name', (backend) => {
  let database: Database;
  let resources: ProtectedResourceRepository;
  let services: ServiceRepository;
  let permissionSets: PermissionSetRepository;
  const clock = new FrozenClock();

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    resources = new ProtectedResourceRepository(database.dataSource, database.resourceCatalog);
    services = new ServiceRepository(
      database.dataSource,
      new Transactions(database.dataSource),
      new ExchangeChanges(database.exchangeCache, database.tokenState),
    );
    permissionSets = new PermissionSetRepository(database.dataSource);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('stores a resource as given and reads it back by id, ids and URI', async () => {
    const id = randomUUID();
    const given = `${uri()}/`;
    const created = await resources.create(id, resource(given), clock.now());
    expect(created).toMatchObject({
      id,
      resourceUri: given,
      scopes: [
        { scope: 'files.read', description: 'May files.read' },
        { scope: 'files.write', description: 'May files.write' },
      ],
    });
    expect(await resources.findById(id)).toEqual(created);
    expect(await resources.findByIds([id, randomUUID()])).toEqual([created]);
    expect(await resources.findByUri(given)).toEqual(created);
    expect(await resources.findByUri(given.slice(0, -1))).toBeUndefined();
    expect(await resources.existingIds([id, randomUUID()])).toEqual(new Set([id]));
  });

  it('refuses a second resource with the same URI (duplicate_resource_uri), on create and on replace', async () => {
    const taken = uri();
    await resources.create(randomUUID(), resource(taken), clock.now());
    const created = resources.create(randomUUID(), resource(taken), clock.now());
    await expect(created).rejects.toBeInstanceOf(RegistryError);
    await expect(created).rejects.toMatchObject({
      code: 'duplicate_resource_uri',
      message: `another protected resource already has resource_uri ${taken}`,
    });
    const other = randomUUID();
    await resources.create(other, resource(uri()), clock.now());
    await expect(resources.replace(other, resource(taken), clock.now())).rejects.toMatchObject({
      code: 'duplicate_resource_uri',
    });
  });

  it("refuses a URI a service lists among its protected resources, and a service listing a registered resource's URI (resource_uri_of_other_kind)", async () => {
    const owned = uri();
    await services.create(randomUUID(), service([owned]), null, clock.now());
    // The service's list is normalised; the resource URI is compared by its normal form.
    const refused = resources.create(
      randomUUID(),
      resource(owned.replace('https://', 'HTTPS://').concat('/')),
      clock.now(),
    );
    await expect(refused).rejects.toBeInstanceOf(RegistryError);
    await expect(refused).rejects.toMatchObject({ code: 'resource_uri_of_other_kind' });
    expect((await resources.list()).some((r) => r.resourceUri.toLowerCase().startsWith(owned))).toBe(false);

    const registered = uri();
    await resources.create(randomUUID(), resource(registered), clock.now());
    await expect(services.create(randomUUID(), service([registered]), null, clock.now())).rejects.toMatchObject({
      code: 'resource_uri_of_other_kind',
    });
    const mail = randomUUID();
    await services.create(mail, service([uri()]), null, clock.now());
    await expect(services.replace(mail, service([registered]), { kind: 'keep' }, clock.now())).rejects.toMatchObject({
      code: 'resource_uri_of_other_kind',
    });
  });

  it('keeps resource scopes of a permission set in order, lists the sets covering a resource, and refuses to delete a named resource (resource_in_use)', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await resources.create(a, resource(uri()), clock.now());
    await resources.create(b, resource(uri(), ['b.read']), clock.now());
    const id = randomUUID();
    const created = await permissionSets.create(
      id,
      set(`covers ${id}`, [
        { resourceId: b, scopes: ['b.read'], requirementType: 'optional' },
        { resourceId: a, scopes: ['files.write', 'files.read'], requirementType: 'mandatory' },
      ]),
      clock.now(),
    );
    const expected = [
      { resourceId: b, scopes: ['b.read'], requirementType: 'optional' },
      { resourceId: a, scopes: ['files.write', 'files.read'], requirementType: 'mandatory' },
    ];
    expect(created.resourceScopes).toEqual(expected);
    expect((await permissionSets.findById(id))?.resourceScopes).toEqual(expected);
    expect((await permissionSets.findByIds([id]))[0]?.resourceScopes).toEqual(expected);
    expect((await permissionSets.listWhere({ resourceId: a })).map((s) => s.id)).toEqual([id]);
    expect(await permissionSets.listWhere({ resourceId: randomUUID() })).toEqual([]);

    const refused = resources.delete(a);
    await expect(refused).rejects.toBeInstanceOf(RegistryError);
    await expect(refused).rejects.toMatchObject({
      code: 'resource_in_use',
      message: 'the protected resource is named by a permission set or delegated by a grant: remove it there first',
    });
    expect(await resources.findById(a)).toBeDefined();

    // Replaced without it, the set no longer holds the resource: it can go.
    await permissionSets.replace(
      id,
      set(`covers ${id}`, [{ resourceId: b, scopes: ['b.read'], requirementType: 'optional' }]),
      clock.now(),
    );
    expect(await resources.delete(a)).toBe(true);
    expect(await resources.delete(a)).toBe(false);
  });

  it('refuses a replacement dropping a scope a permission set names (resource_scope_in_use), naming the set', async () => {
    const id = randomUUID();
    await resources.create(id, resource(uri()), clock.now());
    const name = `writes ${id}`;
    await permissionSets.create(
      randomUUID(),
      set(name, [{ resourceId: id, scopes: ['files.write'], requirementType: 'mandatory' }]),
      clock.now(),
    );
    const refused = resources.replace(
      id,
      resource((await resources.findById(id))?.resourceUri ?? '', ['files.read']),
      clock.now(),
    );
    await expect(refused).rejects.toBeInstanceOf(RegistryError);
    await expect(refused).rejects.toMatchObject({
      code: 'resource_scope_in_use',
      message: `scopes: files.write still named by the permission set(s) "${name}": remove them there first`,
    });
    // Dropping a scope no set names is fine.
    const replaced = await resources.replace(
      id,
      resource((await resources.findById(id))?.resourceUri ?? '', ['files.write']),
      clock.now(),
    );
    expect(replaced?.scopes.map((s) => s.scope)).toEqual(['files.write']);
    expect(await resources.replace(randomUUID(), resource(uri()), clock.now())).toBeUndefined();
  });

  it('refuses a permission set naming a resource that is gone (resource_missing) or a scope it does not offer (resource_scope_not_offered)', async () => {
    const gone = permissionSets.create(
      randomUUID(),
      set(`gone ${randomUUID()}`, [{ resourceId: randomUUID(), scopes: ['a'], requirementType: 'mandatory' }]),
      clock.now(),
    );
    await expect(gone).rejects.toBeInstanceOf(RegistryError);
    await expect(gone).rejects.toMatchObject({
      code: 'resource_missing',
      message: 'resource_scopes: a referenced protected resource no longer exists',
    });
    const id = randomUUID();
    await resources.create(id, resource(uri()), clock.now());
    await expect(
      permissionSets.create(
        randomUUID(),
        set(`offered ${id}`, [{ resourceId: id, scopes: ['files.admin'], requirementType: 'mandatory' }]),
        clock.now(),
      ),
    ).rejects.toMatchObject({
      code: 'resource_scope_not_offered',
      message: `resource_scopes: the protected resource ${id} does not offer files.admin`,
    });
  });

  it('answers byUri from memory (no query while the snapshot lasts) and sees a write through this process at once', async () => {
    const first = uri();
    await resources.create(randomUUID(), resource(first), clock.now());
    expect((await resources.byUri(first, clock.nowMs()))?.resourceUri).toBe(first);
    const count = { queries: 0 };
    await runCountingQueries(count, async () => {
      for (let i = 0; i < 20; i += 1) expect((await resources.byUri(first, clock.nowMs()))?.resourceUri).toBe(first);
      expect(await resources.byUri(`${first}/other`, clock.nowMs())).toBeUndefined();
    });
    expect(count.queries).toBe(0);

    // The clock is frozen: only the write's own invalidation can make these visible.
    const second = uri();
    const id = randomUUID();
    await resources.create(id, resource(second), clock.now());
    expect((await resources.byUri(second, clock.nowMs()))?.id).toBe(id);
    await resources.replace(id, { ...resource(second), displayName: 'Renamed' }, clock.now());
    expect((await resources.byUri(second, clock.nowMs()))?.displayName).toBe('Renamed');
    await resources.delete(id);
    expect(await resources.byUri(second, clock.nowMs())).toBeUndefined();
  });
});

/** Two processes on one PostgreSQL: each with its own `Database`, as two broker replicas have. */
describe.runIf(postgresServerUrl())('the resource catalog across replicas on PostgreSQL', () => {
  let replicaA: Database;
  let replicaB: Database;
  // Frozen: the 5 s backstop never passes, so only a notification can clear A's catalog.
  const clock = new FrozenClock();

  beforeAll(async () => {
    [replicaA, replicaB] = await openPostgresReplicas();
  });

  afterAll(async () => {
    await replicaA?.close();
    await replicaB?.close();
  });

  const listening = async (): Promise<boolean> => (await listenSessions(replicaA)) > 0;

  it("clears one replica's catalog when another replica registers, changes or deletes a resource, before any TTL", async () => {
    const resourcesA = new ProtectedResourceRepository(replicaA.dataSource, replicaA.resourceCatalog);
    const resourcesB = new ProtectedResourceRepository(replicaB.dataSource, replicaB.resourceCatalog);
    const target = uri();

    expect(await resourcesA.byUri(target, clock.nowMs())).toBeUndefined();
    // The listener starts with the first lookup; once LISTEN runs the catalog is cleared, so wait for it.
    for (let i = 0; i < 100 && !(await listening()); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await resourcesA.byUri(target, clock.nowMs())).toBeUndefined();

    const id = randomUUID();
    await resourcesB.create(id, resource(target), clock.now());
    expect(
      (
        await eventually(
          () => resourcesA.byUri(target, clock.nowMs()),
          (r) => r !== undefined,
        )
      )?.id,
    ).toBe(id);

    await resourcesB.replace(id, { ...resource(target), displayName: 'Renamed on B' }, clock.now());
    expect(
      (
        await eventually(
          () => resourcesA.byUri(target, clock.nowMs()),
          (r) => r?.displayName === 'Renamed on B',
        )
      )?.displayName,
    ).toBe('Renamed on B');

    await resourcesB.delete(id);
    expect(
      await eventually(
        () => resourcesA.byUri(target, clock.nowMs()),
        (r) => r === undefined,
      ),
    ).toBeUndefined();
  });
});
