import { RegistryError, type PermissionSet, type RequirementType } from '@broker/domain';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { WithinTransaction } from '../events/event-ledger';
import { constraintViolation, FOREIGN_KEY_VIOLATION, isReferenceViolation, UNIQUE_VIOLATION } from '../persistence-errors';
import { PermissionSetEntity, PermissionSetServiceScopeEntity } from './registry.entities';

export type PermissionSetInput = Omit<PermissionSet, 'id' | 'createdAt' | 'updatedAt'>;

function toPermissionSet(entity: PermissionSetEntity, rows: PermissionSetServiceScopeEntity[]): PermissionSet {
  return {
    id: entity.id,
    name: entity.name,
    description: entity.description,
    serviceScopes: rows
      .sort((a, b) => a.position - b.position)
      .map((row) => ({ serviceId: row.serviceId, scopes: row.scopes, requirementType: row.requirementType as RequirementType })),
    resourceScopes: [],
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
  };
}

function translate(error: unknown, input: PermissionSetInput): never {
  const violation = constraintViolation(error);
  if (violation?.code === UNIQUE_VIOLATION && violation.constraint === 'permission_sets_name_key') {
    throw new RegistryError('duplicate_permission_set_name', `a permission set named "${input.name}" already exists`);
  }
  if (violation?.code === FOREIGN_KEY_VIOLATION) throw new RegistryError('service_missing', 'service_scopes: a referenced service no longer exists');
  throw error;
}

/** Permission sets and the service scopes they bundle. */
export class PermissionSetRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** All sets, or those covering `serviceId`, oldest first. */
  async list(serviceId?: string): Promise<PermissionSet[]> {
    const repository = this.dataSource.getRepository(PermissionSetEntity);
    let sets: PermissionSetEntity[];
    if (serviceId === undefined) {
      sets = await repository.find({ order: { createdAt: 'ASC', id: 'ASC' } });
    } else {
      const covering = await this.dataSource.getRepository(PermissionSetServiceScopeEntity).find({ select: { permissionSetId: true }, where: { serviceId } });
      sets = covering.length === 0 ? [] : await repository.find({ where: { id: In(covering.map((c) => c.permissionSetId)) }, order: { createdAt: 'ASC', id: 'ASC' } });
    }
    const rows = sets.length === 0 ? [] : await this.dataSource.getRepository(PermissionSetServiceScopeEntity).findBy({ permissionSetId: In(sets.map((s) => s.id)) });
    return sets.map((set) => toPermissionSet(set, rows.filter((row) => row.permissionSetId === set.id)));
  }

  async findById(id: string): Promise<PermissionSet | undefined> {
    const set = await this.dataSource.getRepository(PermissionSetEntity).findOneBy({ id });
    if (set === null) return undefined;
    return toPermissionSet(set, await this.dataSource.getRepository(PermissionSetServiceScopeEntity).findBy({ permissionSetId: id }));
  }

  /** The sets among `ids` that exist, in two queries whatever their number. */
  async findByIds(ids: readonly string[]): Promise<PermissionSet[]> {
    if (ids.length === 0) return [];
    const sets = await this.dataSource.getRepository(PermissionSetEntity).findBy({ id: In([...ids]) });
    const rows = sets.length === 0 ? [] : await this.dataSource.getRepository(PermissionSetServiceScopeEntity).findBy({ permissionSetId: In(sets.map((s) => s.id)) });
    return sets.map((set) => toPermissionSet(set, rows.filter((row) => row.permissionSetId === set.id)));
  }

  /** The ids among `ids` that name existing permission sets. */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.dataSource.getRepository(PermissionSetEntity).find({ select: { id: true }, where: { id: In([...ids]) } });
    return new Set(rows.map((row) => row.id));
  }

  /** Issue 17: `events` (the ledger's `permission_set.created`) are appended in the same transaction. */
  async create(id: string, input: PermissionSetInput, now: Date, events?: WithinTransaction<PermissionSet>): Promise<PermissionSet> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const entity = manager.create(PermissionSetEntity, { id, name: input.name, description: input.description, createdAt: now, updatedAt: now });
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
  async replace(id: string, input: PermissionSetInput, now: Date, events?: WithinTransaction<PermissionSet>): Promise<PermissionSet | undefined> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const existing = await manager.findOne(PermissionSetEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
        if (existing === null) return undefined;
        const entity = manager.merge(PermissionSetEntity, existing, { name: input.name, description: input.description, updatedAt: now });
        await manager.save(PermissionSetEntity, entity);
        await manager.delete(PermissionSetServiceScopeEntity, { permissionSetId: id });
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
   * it. False when none. Issue 17: with `events`, the delete and its events share one
   * transaction (a refused delete rolls back and leaves none).
   */
  async delete(id: string, events?: WithinTransaction<string>): Promise<boolean> {
    try {
      if (events === undefined) return ((await this.dataSource.getRepository(PermissionSetEntity).delete({ id })).affected ?? 0) > 0;
      return await this.dataSource.transaction(async (manager) => {
        const deleted = ((await manager.delete(PermissionSetEntity, { id })).affected ?? 0) > 0;
        if (deleted) await events(id, manager);
        return deleted;
      });
    } catch (error) {
      if (isReferenceViolation(error)) {
        throw new RegistryError('permission_set_in_use', 'the permission set is assigned to an agent or delegated by a grant: remove it there first');
      }
      throw error;
    }
  }

  private async writeScopes(manager: EntityManager, permissionSetId: string, input: PermissionSetInput): Promise<PermissionSetServiceScopeEntity[]> {
    const rows = input.serviceScopes.map((entry, position) =>
      manager.create(PermissionSetServiceScopeEntity, { permissionSetId, serviceId: entry.serviceId, scopes: [...entry.scopes], requirementType: entry.requirementType, position }),
    );
    if (rows.length > 0) await manager.insert(PermissionSetServiceScopeEntity, rows);
    return rows;
  }
}
