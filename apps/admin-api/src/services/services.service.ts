import {
  ApiError,
  Clock,
  normaliseResourceUri,
  Random,
  type FieldIssue,
  type Service,
  type TokenEndpointAuthMethod,
} from '@broker/domain';
import { adminEvent, EventLedger, recordChange } from '@broker/events';
import { GrantRepository, ServiceRepository, type SecretChange, type ServiceInput } from '@broker/persistence';
import { bindings, EnvelopeCipher } from '@broker/vault';
import { Injectable } from '@nestjs/common';
import { isUri } from '../common/is-uri';
import { IssuerDiscovery } from './issuer-discovery';
import type { ServiceDto } from './service.dto';

/** Third-party service registration (admin). Every write records its `service.*` event, by the admin principal, in its transaction (never the client secret). */
@Injectable()
export class ServicesService {
  constructor(
    private readonly services: ServiceRepository,
    private readonly grants: GrantRepository,
    private readonly cipher: EnvelopeCipher,
    private readonly discovery: IssuerDiscovery,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly ledger: EventLedger,
  ) {}

  list(): Promise<Service[]> {
    return this.services.list();
  }

  async get(id: string): Promise<Service> {
    const service = await this.services.findById(id);
    if (service === undefined) throw new ApiError('service not found', `no service ${id}`);
    return service;
  }

  async create(admin: string, dto: ServiceDto): Promise<Service> {
    const id = this.random.uuid();
    const secret = dto.client_secret ?? null;
    const input = await this.toInput(dto, secret !== null);
    const events = recordChange(this.ledger, (service: Service) =>
      adminEvent('service.created', admin, { serviceId: service.id }, { display_name: service.displayName }),
    );
    return this.services.create(
      id,
      input,
      secret === null ? null : this.cipher.encrypt(secret, bindings.clientSecret(id)),
      this.clock.now(),
      events,
    );
  }

  /** Full replacement, except an omitted client_secret keeps the stored one. */
  async replace(admin: string, id: string, dto: ServiceDto): Promise<Service> {
    const existing = await this.get(id);
    let change: SecretChange = { kind: 'keep' };
    if (dto.client_secret !== undefined) {
      change = {
        kind: 'set',
        envelope: dto.client_secret === null ? null : this.cipher.encrypt(dto.client_secret, bindings.clientSecret(id)),
      };
    }
    const hasSecret = change.kind === 'keep' ? existing.hasClientSecret : change.envelope !== null;
    const events = recordChange(this.ledger, (changed: Service) =>
      adminEvent('service.changed', admin, { serviceId: changed.id }, { display_name: changed.displayName }),
    );
    const service = await this.services.replace(
      id,
      await this.toInput(dto, hasSecret),
      change,
      this.clock.now(),
      events,
    );
    if (service === undefined) throw new ApiError('service not found', `no service ${id}`);
    return service;
  }

  /** 409 while a permission set or an active grant references the service (expired grants do not count). */
  async delete(admin: string, id: string): Promise<void> {
    await this.grants.releaseExpiredReferences({ serviceId: id }, this.clock.now());
    const events = recordChange(this.ledger, (serviceId: string) =>
      adminEvent('service.deleted', admin, { serviceId }, {}),
    );
    if (!(await this.services.delete(id, events))) throw new ApiError('service not found', `no service ${id}`);
  }

  private async toInput(dto: ServiceDto, hasSecret: boolean): Promise<ServiceInput> {
    const method = authMethod(dto.token_endpoint_auth_method, hasSecret);
    const issuerUri = dto.issuer_uri.replace(/\/+$/, '');
    const protectedResources = normaliseResources(dto.protected_resources ?? []);
    const scopes = dto.scopes ?? [];
    const names = scopes.map((s) => s.scope);
    if (new Set(names).size !== names.length)
      throw new ApiError('validation failed', 'scopes lists a scope more than once', [
        { field: 'scopes', problem: 'duplicate scope' },
      ]);
    let authorizationEndpoint = dto.authorization_endpoint ?? undefined;
    let tokenEndpoint = dto.token_endpoint ?? undefined;
    if (authorizationEndpoint === undefined || tokenEndpoint === undefined) {
      const discovered = await this.discovery.discover(issuerUri);
      authorizationEndpoint ??= discovered.authorizationEndpoint;
      tokenEndpoint ??= discovered.tokenEndpoint;
    }
    return {
      displayName: dto.display_name,
      description: dto.description ?? null,
      logoUrl: dto.logo_url ?? null,
      clientId: dto.client_id,
      tokenEndpointAuthMethod: method,
      issuerUri,
      authorizationEndpoint,
      tokenEndpoint,
      scopes: scopes.map((s) => ({ scope: s.scope, description: s.description ?? '' })),
      protectedResources,
    };
  }
}

/** RFC 7591 §2: a confidential method needs a secret; `none` must not have one. */
function authMethod(requested: TokenEndpointAuthMethod | undefined, hasSecret: boolean): TokenEndpointAuthMethod {
  const method = requested ?? (hasSecret ? 'client_secret_basic' : 'none');
  if (method !== 'none' && !hasSecret) {
    throw new ApiError('validation failed', `client_secret is required when token_endpoint_auth_method is ${method}`, [
      { field: 'client_secret', problem: 'required' },
    ]);
  }
  if (method === 'none' && hasSecret) {
    throw new ApiError(
      'validation failed',
      'a public service (token_endpoint_auth_method none) must not have a client_secret',
      [{ field: 'client_secret', problem: 'must be null for none' }],
    );
  }
  return method;
}

/** Normal forms, de-duplicated, in the order given; every bad entry is named. */
function normaliseResources(values: readonly string[]): string[] {
  const issues: FieldIssue[] = [];
  // A Set keeps the order given and stays linear (a list lookup per entry was quadratic in the body).
  const out = new Set<string>();
  values.forEach((value, index) => {
    // RFC 3986 syntax first: the normal form keeps what the URL parser lets through (`|`, `{}`), and the document says `format: uri`.
    const normal = isUri(value) ? normaliseResourceUri(value) : undefined;
    if (normal === undefined)
      issues.push({
        field: `protected_resources.${index}`,
        problem: 'must be an absolute http(s) URI (RFC 3986) without fragment or user info',
      });
    else out.add(normal);
  });
  if (issues.length > 0)
    throw new ApiError(
      'validation failed',
      `protected_resources: ${issues.map((i) => `${i.field} ${i.problem}`).join('; ')}`,
      issues,
    );
  return [...out];
}
