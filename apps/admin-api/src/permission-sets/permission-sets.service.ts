import { ApiError, Clock, Random, type FieldIssue, type PermissionSet } from '@broker/domain';
import { adminEvent, EventLedger, recordChange } from '@broker/events';
import {
  GrantRepository,
  PermissionSetRepository,
  ProtectedResourceRepository,
  ServiceRepository,
  type PermissionSetInput,
} from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import type { PermissionSetDto, ResourceScopesDto } from './permission-set.dto';

/** Permission set management (admin). Every write records its `permission_set.*` event, by the admin principal, in its transaction. */
@Injectable()
export class PermissionSetsService {
  constructor(
    private readonly permissionSets: PermissionSetRepository,
    private readonly services: ServiceRepository,
    private readonly resources: ProtectedResourceRepository,
    private readonly grants: GrantRepository,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly ledger: EventLedger,
  ) {}

  list(serviceId?: string, resourceId?: string): Promise<PermissionSet[]> {
    return this.permissionSets.listWhere({
      serviceId: serviceId?.toLowerCase(),
      resourceId: resourceId?.toLowerCase(),
    });
  }

  async get(id: string): Promise<PermissionSet> {
    const set = await this.permissionSets.findById(id);
    if (set === undefined) throw new ApiError('permission set not found', `no permission set ${id}`);
    return set;
  }

  async create(admin: string, dto: PermissionSetDto): Promise<PermissionSet> {
    const events = recordChange(this.ledger, (set: PermissionSet) =>
      adminEvent('permission_set.created', admin, {}, { permission_set_id: set.id, name: set.name }),
    );
    return this.permissionSets.create(this.random.uuid(), await this.toInput(dto), this.clock.now(), events);
  }

  async replace(admin: string, id: string, dto: PermissionSetDto): Promise<PermissionSet> {
    const events = recordChange(this.ledger, (changed: PermissionSet) =>
      adminEvent('permission_set.changed', admin, {}, { permission_set_id: changed.id, name: changed.name }),
    );
    const set = await this.permissionSets.replace(id, await this.toInput(dto), this.clock.now(), events);
    if (set === undefined) throw new ApiError('permission set not found', `no permission set ${id}`);
    return set;
  }

  /** 409 while an agent is assigned the set or an active grant delegates it (expired grants do not count). */
  async delete(admin: string, id: string): Promise<void> {
    await this.grants.releaseExpiredReferences({ permissionSetId: id }, this.clock.now());
    const events = recordChange(this.ledger, (permissionSetId: string) =>
      adminEvent('permission_set.deleted', admin, {}, { permission_set_id: permissionSetId }),
    );
    if (!(await this.permissionSets.delete(id, events)))
      throw new ApiError('permission set not found', `no permission set ${id}`);
  }

  private async toInput(dto: PermissionSetDto): Promise<PermissionSetInput> {
    const serviceScopes = dto.service_scopes ?? [];
    const resourceScopes = dto.resource_scopes ?? [];
    if (serviceScopes.length === 0 && resourceScopes.length === 0) {
      throw new ApiError(
        'validation failed',
        'a permission set covers at least one service or protected resource: service_scopes and resource_scopes are both empty',
        [{ field: 'resource_scopes', problem: 'required when service_scopes is empty' }],
      );
    }
    const serviceIds = serviceScopes.map((entry) => entry.service_id.toLowerCase());
    if (new Set(serviceIds).size !== serviceIds.length) {
      throw new ApiError('validation failed', 'service_scopes lists a service more than once', [
        { field: 'service_scopes', problem: 'duplicate service_id' },
      ]);
    }
    const existing = await this.services.existingIds(serviceIds);
    const missing = serviceIds.filter((id) => !existing.has(id));
    if (missing.length > 0) {
      throw new ApiError(
        'validation failed',
        `service_scopes: no service ${missing.join(', ')}`,
        missing.map((id) => ({ field: 'service_scopes', problem: `no service ${id}` })),
      );
    }
    return {
      name: dto.name,
      description: dto.description ?? '',
      resourceScopes: await this.resourceScopes(resourceScopes),
      serviceScopes: serviceScopes.map((entry, index) => ({
        serviceId: serviceIds[index] as string,
        scopes: [...new Set(entry.scopes)],
        requirementType: entry.requirement_type ?? 'mandatory',
      })),
    };
  }

  /** Each resource exists, once, and offers every scope named (a set never names a scope its resource does not offer). */
  private async resourceScopes(entries: readonly ResourceScopesDto[]): Promise<PermissionSetInput['resourceScopes']> {
    const ids = entries.map((entry) => entry.resource_id.toLowerCase());
    if (new Set(ids).size !== ids.length) {
      throw new ApiError('validation failed', 'resource_scopes lists a resource more than once', [
        { field: 'resource_scopes', problem: 'duplicate resource_id' },
      ]);
    }
    const found = new Map((await this.resources.findByIds(ids)).map((resource) => [resource.id, resource] as const));
    const issues: FieldIssue[] = [];
    ids.forEach((id, index) => {
      const resource = found.get(id);
      if (resource === undefined) {
        issues.push({ field: `resource_scopes.${index}.resource_id`, problem: `no resource ${id}` });
        return;
      }
      const offered = new Set(resource.scopes.map((s) => s.scope));
      const unknown = [...new Set((entries[index] as ResourceScopesDto).scopes)].filter((scope) => !offered.has(scope));
      if (unknown.length > 0)
        issues.push({
          field: `resource_scopes.${index}.scopes`,
          problem: `resource ${id} does not offer ${unknown.join(', ')}`,
        });
    });
    if (issues.length > 0)
      throw new ApiError('validation failed', `resource_scopes: ${issues.map((i) => i.problem).join('; ')}`, issues);
    return entries.map((entry, index) => ({
      resourceId: ids[index] as string,
      scopes: [...new Set(entry.scopes)],
      requirementType: entry.requirement_type ?? 'mandatory',
    }));
  }
}
