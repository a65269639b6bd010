import { RegistryError, type ProtectedResource } from '@broker/domain';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import { constraintViolation, isReferenceViolation, UNIQUE_VIOLATION } from '../persistence-errors';
import { PermissionSetResourceScopeEntity, ProtectedResourceEntity } from './registry.entities';
import { ResourceCatalog } from './resource-catalog';
import { assertNotAServiceResource, permissionSetNames } from './resource-uri-claims';

/** Everything of a protected resource an admin writes. */
export type ProtectedResourceInput = Omit<ProtectedResource, 'id' | 'createdAt' | 'updatedAt'>;

function toResource(entity: ProtectedResourceEntity): ProtectedResource {
  return {
    id: entity.id,
    displayName: entity.displayName,
    description: entity.description,
    logoUrl: entity.logoUrl,
    resourceUri: entity.resourceUri,
    scopes: entity.scopes.map((s) => ({ scope: s.scope, description: s.description })),
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
  };
}

function columns(input: ProtectedResourceInput): Omit<ProtectedResourceEntity, 'id' | 'createdAt' | 'updatedAt'> {
  return {
    displayName: input.displayName,
    description: input.description,
    logoUrl: input.logoUrl,
    resourceUri: input.resourceUri,
    scopes: input.scopes.map((s) => ({ scope: s.scope, description: s.description })),
  };
}

function translate(error: unknown, input: ProtectedResourceInput): never {
  const violation = constraintViolation(error);
  if (violation?.code === UNIQUE_VIOLATION && violation.constraint === 'protected_resources_resource_uri_key') {
    throw new RegistryError(
      'duplicate_resource_uri',
      `another protected resource already has resource_uri ${input.resourceUri}`,
    );
  }
  throw error;
}

/**
 * Protected resources (MCP servers, APIs) the broker is the authorization server of. The
 * resource URI is unique (a constraint, so two racing registrations cannot both take it), and
 * never also a service's protected resource (`resource-uri-claims`). `byUri` serves the
 * authorization and token endpoints from the process's `ResourceCatalog`.
 */
@Injectable()
export class ProtectedResourceRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    /** The process's catalog (`Database.resourceCatalog`), cleared by every write here. */
    private readonly catalog: ResourceCatalog,
  ) {}

  /**
   * The resource registered with exactly `uri` (RFC 8707 §2: compared as sent), from the
   * in-memory catalog: one query per `RESOURCE_CATALOG_TTL_MS` at most, fewer when nothing
   * changes (writes here, and on PostgreSQL other replicas' writes, clear it at once).
   */
  byUri(uri: string, nowMs: number): Promise<ProtectedResource | undefined> {
    return this.catalog.byUri(uri, nowMs, () => this.list());
  }

  /** Every resource, oldest first. */
  async list(): Promise<ProtectedResource[]> {
    return (
      await this.dataSource.getRepository(ProtectedResourceEntity).find({ order: { createdAt: 'ASC', id: 'ASC' } })
    ).map(toResource);
  }

  async findById(id: string): Promise<ProtectedResource | undefined> {
    const entity = await this.dataSource.getRepository(ProtectedResourceEntity).findOneBy({ id });
    return entity === null ? undefined : toResource(entity);
  }

  /** The resources among `ids` that exist, in one query whatever their number. */
  async findByIds(ids: readonly string[]): Promise<ProtectedResource[]> {
    if (ids.length === 0) return [];
    return (await this.dataSource.getRepository(ProtectedResourceEntity).findBy({ id: In([...ids]) })).map(toResource);
  }

  /** The resource registered with exactly `uri`, read from the database (the admin API; hot paths use `byUri`). */
  async findByUri(uri: string): Promise<ProtectedResource | undefined> {
    const entity = await this.dataSource.getRepository(ProtectedResourceEntity).findOneBy({ resourceUri: uri });
    return entity === null ? undefined : toResource(entity);
  }

  /** The ids among `ids` that name existing resources. */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.dataSource
      .getRepository(ProtectedResourceEntity)
      .find({ select: { id: true }, where: { id: In([...ids]) } });
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Registers a resource; refused when another has its URI ('duplicate_resource_uri') or a
   * service lists it ('resource_uri_of_other_kind'). `events` are appended in the same transaction.
   */
  async create(
    id: string,
    input: ProtectedResourceInput,
    now: Date,
    events?: WithinTransaction<ProtectedResource>,
  ): Promise<ProtectedResource> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        await assertNotAServiceResource(manager, input.resourceUri);
        const entity = manager.create(ProtectedResourceEntity, {
          ...columns(input),
          id,
          createdAt: now,
          updatedAt: now,
        });
        await manager.insert(ProtectedResourceEntity, entity);
        const resource = toResource(entity);
        await events?.(resource, manager);
        return resource;
      });
    } catch (error) {
      translate(error, input);
    } finally {
      // Committed (or rolled back): this process's next lookup reads the table again.
      this.catalog.invalidate();
    }
  }

  /**
   * Replaces a resource wholesale; undefined when none. Besides the rules of `create`, refused
   * ('resource_scope_in_use') when it drops a scope a permission set still names: the row lock
   * here and the share lock a permission set write takes on the resources it names serialise
   * the two, so a set never names a scope its resource no longer offers.
   */
  async replace(
    id: string,
    input: ProtectedResourceInput,
    now: Date,
    events?: WithinTransaction<ProtectedResource>,
  ): Promise<ProtectedResource | undefined> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const existing = await manager.findOne(ProtectedResourceEntity, {
          where: { id },
          lock: { mode: 'pessimistic_write' },
        });
        if (existing === null) return undefined;
        if (existing.resourceUri !== input.resourceUri) await assertNotAServiceResource(manager, input.resourceUri);
        const offered = new Set(input.scopes.map((s) => s.scope));
        const dropped = existing.scopes.map((s) => s.scope).filter((scope) => !offered.has(scope));
        if (dropped.length > 0) {
          const rows = await manager.find(PermissionSetResourceScopeEntity, { where: { resourceId: id } });
          const naming = rows.filter((row) => row.scopes.some((scope) => dropped.includes(scope)));
          if (naming.length > 0) {
            const used = dropped.filter((scope) => naming.some((row) => row.scopes.includes(scope)));
            const names = await permissionSetNames(
              manager,
              naming.map((row) => row.permissionSetId),
            );
            throw new RegistryError(
              'resource_scope_in_use',
              `scopes: ${used.join(', ')} still named by the permission set(s) ${names.map((n) => `"${n}"`).join(', ')}: remove them there first`,
            );
          }
        }
        const entity = manager.merge(ProtectedResourceEntity, existing, { ...columns(input), updatedAt: now });
        await manager.save(ProtectedResourceEntity, entity);
        const resource = toResource(entity);
        await events?.(resource, manager);
        return resource;
      });
    } catch (error) {
      translate(error, input);
    } finally {
      this.catalog.invalidate();
    }
  }

  /**
   * Deletes the resource; refused ('resource_in_use') while a permission set or a grant
   * references it. False when none. With `events`, the delete and its events share one
   * transaction (a refused delete rolls back and leaves none).
   */
  async delete(id: string, events?: WithinTransaction<string>): Promise<boolean> {
    try {
      if (events === undefined)
        return ((await this.dataSource.getRepository(ProtectedResourceEntity).delete({ id })).affected ?? 0) > 0;
      return await this.dataSource.transaction(async (manager) => {
        const deleted = ((await manager.delete(ProtectedResourceEntity, { id })).affected ?? 0) > 0;
        if (deleted) await events(id, manager);
        return deleted;
      });
    } catch (error) {
      if (isReferenceViolation(error)) {
        throw new RegistryError(
          'resource_in_use',
          'the protected resource is named by a permission set or delegated by a grant: remove it there first',
        );
      }
      throw error;
    } finally {
      this.catalog.invalidate();
    }
  }
}
