import { ApiError, Clock, Random, type ProtectedResource } from '@broker/domain';
import { adminEvent, EventLedger, recordChange } from '@broker/events';
import { ResourceIndicators } from '@broker/oauth-server';
import { GrantRepository, ProtectedResourceRepository, type ProtectedResourceInput } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import type { ResourceDto } from './resource.dto';

const ALLOWED_RESOURCES_KEY = 'oauth2_authorization_server.local.resource_indicators.allowed_resources';

/**
 * Protected resource registration (admin): MCP servers and APIs the broker issues tokens for.
 * Every write records its `resource.*` event, by the admin principal, in its transaction.
 */
@Injectable()
export class ResourcesService {
  constructor(
    private readonly resources: ProtectedResourceRepository,
    private readonly grants: GrantRepository,
    private readonly indicators: ResourceIndicators,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly ledger: EventLedger,
  ) {}

  list(): Promise<ProtectedResource[]> {
    return this.resources.list();
  }

  async get(id: string): Promise<ProtectedResource> {
    const resource = await this.resources.findById(id);
    if (resource === undefined) throw new ApiError('resource not found', `no resource ${id}`);
    return resource;
  }

  async create(admin: string, dto: ResourceDto): Promise<ProtectedResource> {
    const input = this.toInput(dto);
    const events = recordChange(this.ledger, (resource: ProtectedResource) =>
      adminEvent('resource.created', admin, {}, details(resource)),
    );
    return this.resources.create(this.random.uuid(), input, this.clock.now(), events);
  }

  /** Full replacement; 409 when it drops a scope a permission set names. */
  async replace(admin: string, id: string, dto: ResourceDto): Promise<ProtectedResource> {
    const input = this.toInput(dto);
    const events = recordChange(this.ledger, (resource: ProtectedResource) =>
      adminEvent('resource.changed', admin, {}, details(resource)),
    );
    const resource = await this.resources.replace(id, input, this.clock.now(), events);
    if (resource === undefined) throw new ApiError('resource not found', `no resource ${id}`);
    return resource;
  }

  /** 409 while a permission set names the resource or an active grant delegates it (expired grants do not count). */
  async delete(admin: string, id: string): Promise<void> {
    await this.grants.releaseExpiredReferences({ resourceId: id }, this.clock.now());
    const events = recordChange(this.ledger, (resourceId: string) =>
      adminEvent('resource.deleted', admin, {}, { resource_id: resourceId }),
    );
    if (!(await this.resources.delete(id, events))) throw new ApiError('resource not found', `no resource ${id}`);
  }

  private toInput(dto: ResourceDto): ProtectedResourceInput {
    // RFC 8707 §2: the authorization endpoint takes only resources the configured policy admits; registering another could never be asked for.
    if (!this.indicators.configuredAllows(dto.resource_uri)) {
      throw new ApiError('validation failed', `resource_uri is outside ${ALLOWED_RESOURCES_KEY}`, [
        { field: 'resource_uri', problem: `not within ${ALLOWED_RESOURCES_KEY}` },
      ]);
    }
    const names = dto.scopes.map((s) => s.scope);
    if (new Set(names).size !== names.length)
      throw new ApiError('validation failed', 'scopes lists a scope more than once', [
        { field: 'scopes', problem: 'duplicate scope' },
      ]);
    return {
      displayName: dto.display_name,
      description: dto.description ?? null,
      logoUrl: dto.logo_url ?? null,
      resourceUri: dto.resource_uri,
      scopes: dto.scopes.map((s) => ({ scope: s.scope, description: s.description })),
    };
  }
}

function details(resource: ProtectedResource): { resource_id: string; display_name: string; resource_uri: string } {
  return { resource_id: resource.id, display_name: resource.displayName, resource_uri: resource.resourceUri };
}
