import { RegistryError, type PermissionSet, type RequirementType } from '@broker/domain';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import {
  constraintViolation,
  FOREIGN_KEY_VIOLATION,
  isReferenceViolation,
  UNIQUE_VIOLATION,
} from '../persistence-errors';
import {
  PermissionSetEntity,
  PermissionSetResourceScopeEntity,
  PermissionSetServiceScopeEntity,
  ProtectedResourceEntity,
} from './registry.entities';

export type PermissionSetInput = Omit<PermissionSet, 'id' | 'createdAt' | 'updatedAt'>;

/** The rows of one or more sets: their service scopes and their protected-resource scopes. */
interface ScopeRows {
  readonly services: PermissionSetServiceScopeEntity[];
  readonly resources: PermissionSetResourceScopeEntity[];
}

function rowsOf(rows: ScopeRows, permissionSetId: string): ScopeRows {
  return {
    services: rows.services.filter((row) => row.permissionSetId === permissionSetId),
    resources: rows.resources.filter((row) => row.permissionSetId === permissionSetId),
  };
}

function toPermissionSet(entity: PermissionSetEntity, { services: rows, resources }: ScopeRows): PermissionSet {
  return {
    id: entity.id,
    name: entity.name,
    description: entity.description,
    serviceScopes: rows
      .sort((a, b) => a.position - b.position)
      .map((row) => ({
        serviceId: row.serviceId,
        scopes: row.scopes,
        requirementType: row.requirementType as RequirementType,
      })),
    resourceScopes: resources
      .sort((a, b) => a.position - b.position)
      .map((row) => ({
        resourceId: row.resourceId,
        scopes: row.scopes,
        requirementType: row.requirementType as RequirementType,
      })),
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
  };
}

function translate(error: unknown, input: PermissionSetInput): never {
  const violation = constraintViolation(error);
  if (violation?.code === UNIQUE_VIOLATION && violation.constraint === 'permission_sets_name_key') {
    throw new RegistryError('duplicate_permission_set_name', `a permission set named "${input.name}" already exists`);
  }
  if (
    violation?.code === FOREIGN_KEY_VIOLATION &&
    violation.constraint?.startsWith('permission_set_resource_scopes') === true
  ) {
    throw new RegistryError('resource_missing', 'resource_scopes: a referenced protected resource no longer exists');
  }
  if (violation?.code === FOREIGN_KEY_VIOLATION)
    throw new RegistryError('service_missing', 'service_scopes: a referenced service no longer exists');
  throw error;
}

interface ScopeRow {
  readonly kind: 'service' | 'resource';
  readonly permission_set_id: string;
  readonly ref_id: string;
  readonly scopes: string[];
  readonly requirement_type: string;
  readonly position: number;
}

const SCOPE_ROWS_SQL = `SELECT 'service' AS kind, permission_set_id, service_id AS ref_id, scopes, requirement_type, position
    FROM permission_set_service_scopes WHERE permission_set_id = ANY($1::uuid[])
  UNION ALL
  SELECT 'resource' AS kind, permission_set_id, resource_id AS ref_id, scopes, requirement_type, position
    FROM permission_set_resource_scopes WHERE permission_set_id = ANY($1::uuid[])`;

/** Which sets a list returns: those covering the service and (both given) the protected resource. */
export interface PermissionSetFilter {
  readonly serviceId?: string;
  readonly resourceId?: string;
}

/** Permission sets and the service scopes and protected-resource scopes they bundle. */
@Injectable()
export class PermissionSetRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** All sets, or those covering `serviceId`, oldest first. */
  list(serviceId?: string): Promise<PermissionSet[]> {
    return this.listWhere({ serviceId });
  }

  /** The sets covering the filter's service and protected resource (each when given), oldest first. */
  async listWhere(filter: PermissionSetFilter): Promise<PermissionSet[]> {
    let ids: Set<string> | undefined;
    if (filter.serviceId !== undefined) {
      const covering = await this.dataSource
        .getRepository(PermissionSetServiceScopeEntity)
        .find({ select: { permissionSetId: true }, where: { serviceId: filter.serviceId } });
      ids = new Set(covering.map((c) => c.permissionSetId));
    }
    if (filter.resourceId !== undefined) {
      const covering = await this.dataSource
        .getRepository(PermissionSetResourceScopeEntity)
        .find({ select: { permissionSetId: true }, where: { resourceId: filter.resourceId } });
      const previous = ids;
      ids = new Set(covering.map((c) => c.permissionSetId).filter((id) => previous === undefined || previous.has(id)));
    }
    const repository = this.dataSource.getRepository(PermissionSetEntity);
    let sets: PermissionSetEntity[];
    if (ids === undefined) sets = await repository.find({ order: { createdAt: 'ASC', id: 'ASC' } });
    else
      sets =
        ids.size === 0
          ? []
          : await repository.find({ where: { id: In([...ids]) }, order: { createdAt: 'ASC', id: 'ASC' } });
    const rows = await this.scopeRows(sets.map((s) => s.id));
    return sets.map((set) => toPermissionSet(set, rowsOf(rows, set.id)));
  }

  async findById(id: string): Promise<PermissionSet | undefined> {
    const set = await this.dataSource.getRepository(PermissionSetEntity).findOneBy({ id });
    if (set === null) return undefined;
    return toPermissionSet(set, await this.scopeRows([id]));
  }

  /** The sets among `ids` that exist, in two queries whatever their number. */
  async findByIds(ids: readonly string[]): Promise<PermissionSet[]> {
    if (ids.length === 0) return [];
    const sets = await this.dataSource.getRepository(PermissionSetEntity).findBy({ id: In([...ids]) });
    const rows = await this.scopeRows(sets.map((s) => s.id));
    return sets.map((set) => toPermissionSet(set, rowsOf(rows, set.id)));
  }

  /** The ids among `ids` that name existing permission sets. */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.dataSource
      .getRepository(PermissionSetEntity)
      .find({ select: { id: true }, where: { id: In([...ids]) } });
    return new Set(rows.map((row) => row.id));
  }

  /** `events` (the ledger's `permission_set.created`) are appended in the same transaction. */
  async create(
    id: string,
    input: PermissionSetInput,
    now: Date,
    events?: WithinTransaction<PermissionSet>,
  ): Promise<PermissionSet> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const entity = manager.create(PermissionSetEntity, {
          id,
          name: input.name,
          description: input.description,
          createdAt: now,
          updatedAt: now,
        });
        await manager.insert(PermissionSetEntity, entity);
        const set = toPermissionSet(entity, await this.writeScopes(manager, id, input));
        await events?.(set, manager);
        return set;
      });
    } catch (error) {
      translate(error, input);
    }
  }

  /** Undefined when no such set. `events` are appended in the same transaction, only when it was replaced. */
  async replace(
    id: string,
    input: PermissionSetInput,
    now: Date,
    events?: WithinTransaction<PermissionSet>,
  ): Promise<PermissionSet | undefined> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const existing = await manager.findOne(PermissionSetEntity, {
          where: { id },
          lock: { mode: 'pessimistic_write' },
        });
        if (existing === null) return undefined;
        const entity = manager.merge(PermissionSetEntity, existing, {
          name: input.name,
          description: input.description,
          updatedAt: now,
        });
        await manager.save(PermissionSetEntity, entity);
        await manager.delete(PermissionSetServiceScopeEntity, { permissionSetId: id });
        await manager.delete(PermissionSetResourceScopeEntity, { permissionSetId: id });
        const set = toPermissionSet(entity, await this.writeScopes(manager, id, input));
        await events?.(set, manager);
        return set;
      });
    } catch (error) {
      translate(error, input);
    }
  }

  /**
   * Deletes the set; refused ('permission_set_in_use') while an agent or a grant references
   * it. False when none. With `events`, the delete and its events share one
   * transaction (a refused delete rolls back and leaves none).
   */
  async delete(id: string, events?: WithinTransaction<string>): Promise<boolean> {
    try {
      if (events === undefined)
        return ((await this.dataSource.getRepository(PermissionSetEntity).delete({ id })).affected ?? 0) > 0;
      return await this.dataSource.transaction(async (manager) => {
        const deleted = ((await manager.delete(PermissionSetEntity, { id })).affected ?? 0) > 0;
        if (deleted) await events(id, manager);
        return deleted;
      });
    } catch (error) {
      if (isReferenceViolation(error)) {
        throw new RegistryError(
          'permission_set_in_use',
          'the permission set is assigned to an agent or delegated by a grant: remove it there first',
        );
      }
      throw error;
    }
  }

  /** The child rows of the sets, both kinds in one statement (a list stays at two statements whatever its length). */
  private async scopeRows(permissionSetIds: readonly string[]): Promise<ScopeRows> {
    if (permissionSetIds.length === 0) return { services: [], resources: [] };
    const rows = await this.dataSource.query<ScopeRow[]>(SCOPE_ROWS_SQL, [[...permissionSetIds]]);
    const services: PermissionSetServiceScopeEntity[] = [];
    const resources: PermissionSetResourceScopeEntity[] = [];
    for (const row of rows) {
      const common = {
        permissionSetId: row.permission_set_id,
        scopes: row.scopes,
        requirementType: row.requirement_type,
        position: row.position,
      };
      if (row.kind === 'service') services.push({ ...common, serviceId: row.ref_id });
      else resources.push({ ...common, resourceId: row.ref_id });
    }
    return { services, resources };
  }

  private async writeScopes(
    manager: EntityManager,
    permissionSetId: string,
    input: PermissionSetInput,
  ): Promise<ScopeRows> {
    const services = input.serviceScopes.map((entry, position) =>
      manager.create(PermissionSetServiceScopeEntity, {
        permissionSetId,
        serviceId: entry.serviceId,
        scopes: [...entry.scopes],
        requirementType: entry.requirementType,
        position,
      }),
    );
    if (services.length > 0) await manager.insert(PermissionSetServiceScopeEntity, services);
    await assertScopesOffered(manager, input);
    const resources = input.resourceScopes.map((entry, position) =>
      manager.create(PermissionSetResourceScopeEntity, {
        permissionSetId,
        resourceId: entry.resourceId,
        scopes: [...entry.scopes],
        requirementType: entry.requirementType,
        position,
      }),
    );
    if (resources.length > 0) await manager.insert(PermissionSetResourceScopeEntity, resources);
    return { services, resources };
  }
}

/**
 * Within the write's transaction: every protected resource named still exists and offers the
 * scopes named ('resource_missing', 'resource_scope_not_offered'). The share lock on the
 * resources' rows waits for a replacement of one in flight and holds off the next until commit
 * (`ProtectedResourceRepository.replace` checks the sets naming the scopes it drops).
 */
async function assertScopesOffered(manager: EntityManager, input: PermissionSetInput): Promise<void> {
  if (input.resourceScopes.length === 0) return;
  const ids = input.resourceScopes.map((entry) => entry.resourceId);
  const resources = await manager.find(ProtectedResourceEntity, {
    select: { id: true, scopes: true },
    where: { id: In(ids) },
    lock: { mode: 'pessimistic_read' },
  });
  for (const entry of input.resourceScopes) {
    const resource = resources.find((r) => r.id === entry.resourceId);
    if (resource === undefined)
      throw new RegistryError('resource_missing', 'resource_scopes: a referenced protected resource no longer exists');
    const offered = new Set(resource.scopes.map((s) => s.scope));
    const missing = entry.scopes.filter((scope) => !offered.has(scope));
    if (missing.length > 0)
      throw new RegistryError(
        'resource_scope_not_offered',
        `resource_scopes: the protected resource ${entry.resourceId} does not offer ${missing.join(', ')}`,
      );
  }
}
