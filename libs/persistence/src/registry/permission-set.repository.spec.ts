import { randomUUID } from 'node:crypto';
import { RegistryError, SystemClock } from '@broker/domain';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { AgentRepository } from './agent.repository';
import { PermissionSetRepository, type PermissionSetInput } from './permission-set.repository';

function set(name: string, serviceScopes: PermissionSetInput['serviceScopes'] = []): PermissionSetInput {
  return { name, description: '', serviceScopes, resourceScopes: [] };
}

// The repository names the registry rule; only the admin API picks the wire code.
describe.each(testBackends())('PermissionSetRepository refusals on $name', (backend) => {
  let database: Database;
  let permissionSets: PermissionSetRepository;
  let agents: AgentRepository;

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    permissionSets = new PermissionSetRepository(database.dataSource);
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

  it('refuses a second set with the same name with the registry rule, on create and on rename', async () => {
    await permissionSets.create(randomUUID(), set('Read mail'), new Date());
    const message = 'a permission set named "Read mail" already exists';

    const created = permissionSets.create(randomUUID(), set('Read mail'), new Date());
    await expect(created).rejects.toBeInstanceOf(RegistryError);
    await expect(created).rejects.toMatchObject({ code: 'duplicate_permission_set_name', message });

    const other = randomUUID();
    await permissionSets.create(other, set('Send mail'), new Date());
    const renamed = permissionSets.replace(other, set('Read mail'), new Date());
    await expect(renamed).rejects.toBeInstanceOf(RegistryError);
    await expect(renamed).rejects.toMatchObject({ code: 'duplicate_permission_set_name', message });
  });

  it('refuses service scopes naming a service that no longer exists with the registry rule', async () => {
    const refused = permissionSets.create(
      randomUUID(),
      set('Gone', [{ serviceId: randomUUID(), scopes: ['a'], requirementType: 'mandatory' }]),
      new Date(),
    );
    await expect(refused).rejects.toBeInstanceOf(RegistryError);
    await expect(refused).rejects.toMatchObject({
      code: 'service_missing',
      message: 'service_scopes: a referenced service no longer exists',
    });
  });

  it('refuses to delete a set an agent is assigned with the registry rule, and keeps it', async () => {
    const id = randomUUID();
    await permissionSets.create(id, set(`assigned ${id}`), new Date());
    await agents.create(
      randomUUID(),
      {
        displayName: 'Holder',
        description: null,
        canonicalId: null,
        clientId: null,
        logoUrl: null,
        governanceUrl: null,
        userDocumentationUrl: null,
        agentInterfaceUrl: null,
        redirectUris: [],
        allowedScopes: [],
        allowedResources: [],
        clientUris: [],
        dpopBoundAccessTokens: null,
        permissionSets: [{ permissionSetId: id, requirementType: 'mandatory' }],
      },
      new Date(),
    );

    const refused = permissionSets.delete(id);
    await expect(refused).rejects.toBeInstanceOf(RegistryError);
    await expect(refused).rejects.toMatchObject({
      code: 'permission_set_in_use',
      message: 'the permission set is assigned to an agent or delegated by a grant: remove it there first',
    });
    expect(await permissionSets.findById(id)).toBeDefined();
  });
});
