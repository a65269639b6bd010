import { RegistryError, type Service, type TokenEndpointAuthMethod } from '@broker/domain';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import { constraintViolation, isReferenceViolation, UNIQUE_VIOLATION } from '../persistence-errors';
import { ServiceEntity, ServiceProtectedResourceEntity } from './registry.entities';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { assertNoneARegisteredResource } from './resource-uri-claims';

/** Everything of a service an admin writes, except its secret. */
export type ServiceInput = Omit<Service, 'id' | 'createdAt' | 'updatedAt' | 'hasClientSecret'>;

/** What to do with the stored client secret on a write. */
export type SecretChange = { readonly kind: 'keep' } | { readonly kind: 'set'; readonly envelope: Buffer | null };

function toService(entity: ServiceEntity, resources: ServiceProtectedResourceEntity[]): Service {
  return {
    id: entity.id,
    displayName: entity.displayName,
    description: entity.description,
    logoUrl: entity.logoUrl,
    clientId: entity.clientId,
    hasClientSecret: entity.clientSecretEnvelope !== null,
    tokenEndpointAuthMethod: entity.tokenEndpointAuthMethod as TokenEndpointAuthMethod,
    issuerUri: entity.issuerUri,
    authorizationEndpoint: entity.authorizationEndpoint,
    tokenEndpoint: entity.tokenEndpoint,
    scopes: entity.scopes,
    protectedResources: resources.sort((a, b) => a.position - b.position).map((r) => r.uri),
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
  };
}

function translateResourceConflict(error: unknown): never {
  const violation = constraintViolation(error);
  if (violation?.code === UNIQUE_VIOLATION && violation.constraint === 'service_protected_resources_pkey') {
    const detail = (error as { driverError?: { detail?: unknown } }).driverError?.detail;
    const uri = typeof detail === 'string' ? /\(uri\)=\((.*)\) already exists/.exec(detail)?.[1] : undefined;
    throw new RegistryError(
      'resource_owned_by_other_service',
      `protected resource ${uri ?? ''} already belongs to another service`.replace('  ', ' '),
    );
  }
  throw error;
}

/**
 * Third-party services and their protected resources. A resource URI is the primary key
 * of its row, so two services can never own the same URI, even when two requests race; nor
 * can a registered protected resource have it ('resource_uri_of_other_kind').
 */
@Injectable()
export class ServiceRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly exchangeChanges: ExchangeChanges,
  ) {}

  async list(): Promise<Service[]> {
    const services = await this.dataSource
      .getRepository(ServiceEntity)
      .find({ order: { createdAt: 'ASC', id: 'ASC' } });
    const resources =
      services.length === 0
        ? []
        : await this.dataSource
            .getRepository(ServiceProtectedResourceEntity)
            .findBy({ serviceId: In(services.map((s) => s.id)) });
    return services.map((service) =>
      toService(
        service,
        resources.filter((r) => r.serviceId === service.id),
      ),
    );
  }

  async findById(id: string): Promise<Service | undefined> {
    const service = await this.dataSource.getRepository(ServiceEntity).findOneBy({ id });
    if (service === null) return undefined;
    return toService(
      service,
      await this.dataSource.getRepository(ServiceProtectedResourceEntity).findBy({ serviceId: id }),
    );
  }

  /** The services among `ids` that exist, in two queries whatever their number. */
  async findByIds(ids: readonly string[]): Promise<Service[]> {
    if (ids.length === 0) return [];
    const services = await this.dataSource.getRepository(ServiceEntity).findBy({ id: In([...ids]) });
    const resources =
      services.length === 0
        ? []
        : await this.dataSource
            .getRepository(ServiceProtectedResourceEntity)
            .findBy({ serviceId: In(services.map((s) => s.id)) });
    return services.map((service) =>
      toService(
        service,
        resources.filter((r) => r.serviceId === service.id),
      ),
    );
  }

  /** The ids among `ids` that name existing services. */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.dataSource
      .getRepository(ServiceEntity)
      .find({ select: { id: true }, where: { id: In([...ids]) } });
    return new Set(rows.map((row) => row.id));
  }

  /** The URIs among `uris` that some service's `protected_resources` lists. */
  async protectedResourcesAmong(uris: readonly string[]): Promise<Set<string>> {
    if (uris.length === 0) return new Set();
    const rows = await this.dataSource.query<{ uri: string }[]>(
      'SELECT uri FROM service_protected_resources WHERE uri = ANY($1)',
      [[...uris]],
    );
    return new Set(rows.map((row) => row.uri));
  }

  /** The sealed client secret, or null when none is stored. */
  async findSecretEnvelope(id: string): Promise<Buffer | null | undefined> {
    const row = await this.dataSource
      .getRepository(ServiceEntity)
      .findOne({ select: { id: true, clientSecretEnvelope: true }, where: { id } });
    return row === null ? undefined : row.clientSecretEnvelope;
  }

  /** `events` (the ledger's `service.created`) are appended in the same transaction. */
  async create(
    id: string,
    input: ServiceInput,
    secretEnvelope: Buffer | null,
    now: Date,
    events?: WithinTransaction<Service>,
  ): Promise<Service> {
    try {
      return await this.transactions.run(async (manager, scope) => {
        // Every exchange context names its service: all of this process's are read again.
        scope.afterCommit(() => this.exchangeChanges.forget());
        await assertNoneARegisteredResource(manager, input.protectedResources);
        const entity = manager.create(ServiceEntity, {
          ...columns(input),
          id,
          clientSecretEnvelope: secretEnvelope,
          createdAt: now,
          updatedAt: now,
        });
        await manager.insert(ServiceEntity, entity);
        const service = toService(entity, await this.writeResources(manager, id, input.protectedResources));
        await events?.(service, manager);
        return service;
      });
    } catch (error) {
      translateResourceConflict(error);
    }
  }

  /** Undefined when no such service. `events` are appended in the same transaction, only when it was replaced. */
  async replace(
    id: string,
    input: ServiceInput,
    secret: SecretChange,
    now: Date,
    events?: WithinTransaction<Service>,
  ): Promise<Service | undefined> {
    try {
      return await this.transactions.run(async (manager, scope) => {
        scope.afterCommit(() => this.exchangeChanges.forget());
        const existing = await manager.findOne(ServiceEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
        if (existing === null) return undefined;
        await assertNoneARegisteredResource(manager, input.protectedResources);
        const entity = manager.merge(ServiceEntity, existing, { ...columns(input), updatedAt: now });
        if (secret.kind === 'set') entity.clientSecretEnvelope = secret.envelope;
        await manager.save(ServiceEntity, entity);
        await manager.delete(ServiceProtectedResourceEntity, { serviceId: id });
        const service = toService(entity, await this.writeResources(manager, id, input.protectedResources));
        await events?.(service, manager);
        return service;
      });
    } catch (error) {
      translateResourceConflict(error);
    }
  }

  /**
   * Deletes the service; refused ('service_in_use') while a permission set or a grant
   * references it. False when none. With `events`, the delete and its events share
   * one transaction (a refused delete rolls back and leaves none).
   */
  async delete(id: string, events?: WithinTransaction<string>): Promise<boolean> {
    try {
      return await this.transactions.run(async (manager, scope) => {
        scope.afterCommit(() => this.exchangeChanges.forget());
        const deleted = ((await manager.delete(ServiceEntity, { id })).affected ?? 0) > 0;
        if (deleted) await events?.(id, manager);
        return deleted;
      });
    } catch (error) {
      if (isReferenceViolation(error)) {
        throw new RegistryError(
          'service_in_use',
          'the service is referenced by a permission set or a grant: remove it from them first',
        );
      }
      throw error;
    }
  }

  private async writeResources(
    manager: EntityManager,
    serviceId: string,
    uris: readonly string[],
  ): Promise<ServiceProtectedResourceEntity[]> {
    const rows = uris.map((uri, position) =>
      manager.create(ServiceProtectedResourceEntity, { uri, serviceId, position }),
    );
    if (rows.length > 0) await manager.insert(ServiceProtectedResourceEntity, rows);
    return rows;
  }
}

function columns(input: ServiceInput): Omit<ServiceEntity, 'id' | 'createdAt' | 'updatedAt' | 'clientSecretEnvelope'> {
  return {
    displayName: input.displayName,
    description: input.description,
    logoUrl: input.logoUrl,
    clientId: input.clientId,
    tokenEndpointAuthMethod: input.tokenEndpointAuthMethod,
    issuerUri: input.issuerUri,
    authorizationEndpoint: input.authorizationEndpoint,
    tokenEndpoint: input.tokenEndpoint,
    scopes: input.scopes.map((s) => ({ scope: s.scope, description: s.description })),
  };
}
