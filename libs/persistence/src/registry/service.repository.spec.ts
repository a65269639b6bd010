import { randomUUID } from 'node:crypto';
import { RegistryError } from '@broker/domain';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { PermissionSetRepository } from './permission-set.repository';
import { ServiceRepository, type ServiceInput } from './service.repository';

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
    scopes: [{ scope: 'mail.read', description: '' }],
    protectedResources,
  };
}

// The repository names the registry rule; only the admin API picks the wire code.
describe.each(testBackends())('ServiceRepository refusals on $name', (backend) => {
  let database: Database;
  let services: ServiceRepository;
  let permissionSets: PermissionSetRepository;

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
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

  it('refuses a protected resource another service owns with the registry rule, on create and on replace', async () => {
    await services.create(randomUUID(), service(['https://owned.example.com/data']), null, new Date());
    const message = 'protected resource https://owned.example.com/data already belongs to another service';

    const created = services.create(randomUUID(), service(['https://owned.example.com/data']), null, new Date());
    await expect(created).rejects.toBeInstanceOf(RegistryError);
    await expect(created).rejects.toMatchObject({ code: 'resource_owned_by_other_service', message });

    const other = randomUUID();
    await services.create(other, service([]), null, new Date());
    const replaced = services.replace(other, service(['https://owned.example.com/data']), { kind: 'keep' }, new Date());
    await expect(replaced).rejects.toBeInstanceOf(RegistryError);
    await expect(replaced).rejects.toMatchObject({ code: 'resource_owned_by_other_service', message });
  });

  it('refuses to delete a service a permission set covers with the registry rule, and keeps it', async () => {
    const id = randomUUID();
    await services.create(id, service([]), null, new Date());
    await permissionSets.create(
      randomUUID(),
      {
        name: `covers ${id}`,
        description: '',
        resourceScopes: [],
        serviceScopes: [{ serviceId: id, scopes: ['mail.read'], requirementType: 'mandatory' }],
      },
      new Date(),
    );

    const refused = services.delete(id);
    await expect(refused).rejects.toBeInstanceOf(RegistryError);
    await expect(refused).rejects.toMatchObject({
      code: 'service_in_use',
      message: 'the service is referenced by a permission set or a grant: remove it from them first',
    });
    expect(await services.findById(id)).toBeDefined();
  });
});
