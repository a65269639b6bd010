import {
  normaliseResourceUri,
  OAuthError,
  OFFLINE_SCOPES,
  scopesAllowedFor,
  type Agent,
  type ProtectedResource,
} from '@broker/domain';
import {
  GrantRepository,
  PermissionSetRepository,
  ProtectedResourceRepository,
  ServiceRepository,
} from '@broker/persistence';
import { Injectable } from '@nestjs/common';

/**
 * What an authorization request may be given for the resources it names, and whether the
 * person's consent covers it already:
 * - `scopes`: the scopes the code (and its tokens) will carry;
 * - `consented`: false when the consent page must be shown first.
 */
export interface ResourceConsentDecision {
  readonly scopes: readonly string[];
  readonly consented: boolean;
}

/** The scopes that are the authorization server's own, not a resource's (the refresh token's). */
function isOwnScope(scope: string): boolean {
  return OFFLINE_SCOPES.has(scope);
}

/** A registered resource is asked for alone: its tokens carry only its own scopes. */
const ONE_REGISTERED = 'a registered resource is requested alone: one authorization request per MCP server';

/**
 * Consent per resource (docs/oauth2.md "Consent per MCP server"). A request naming a registered
 * protected resource (an MCP server) is covered only when the person's active grant delegates
 * that resource with every scope asked, through the agent's permission sets; otherwise the
 * consent page asks for that resource (incremental consent: the rest of the grant is kept),
 * and it never yields a code for a resource the person did not consent to. Its scopes are
 * only that resource's: each asked scope must be offered by the resource and bundled for it
 * by one of the agent's permission sets (`invalid_scope`); none asked means the ones granted.
 *
 * A resource that is not registered is accepted only as a third-party service's
 * `protected_resources` entry the person's grant delegates (how MCP servers were put behind
 * the broker before they could be registered); any other is `invalid_target`.
 */
@Injectable()
export class ResourceConsent {
  constructor(
    private readonly catalog: ProtectedResourceRepository,
    private readonly permissionSets: PermissionSetRepository,
    private readonly services: ServiceRepository,
    private readonly grants: GrantRepository,
  ) {}

  /** The registered resource among `resources`, when one is; `invalid_target` if it is not alone. */
  async registered(resources: readonly string[], now: Date): Promise<ProtectedResource | undefined> {
    const found = (await Promise.all(resources.map((uri) => this.catalog.byUri(uri, now.getTime())))).filter(
      (r): r is ProtectedResource => r !== undefined,
    );
    if (found.length === 0) return undefined;
    if (resources.length > 1) throw new OAuthError('invalid_target', ONE_REGISTERED);
    return found[0];
  }

  /**
   * The decision for an authorization request of `agent` for `principal` naming `resources`
   * (checked against the policy already, at least one) with `scopes` (within the agent's
   * `allowed_scopes` already). Throws `invalid_target` / `invalid_scope` (sent by redirect).
   */
  async decide(
    principal: string,
    agent: Agent,
    resources: readonly string[],
    scopes: readonly string[],
    now: Date,
  ): Promise<ResourceConsentDecision> {
    const resource = await this.registered(resources, now);
    if (resource === undefined) return this.decideUnregistered(principal, agent, resources, scopes, now);
    const bundled = await this.bundledScopes(agent, resource);
    if (bundled === undefined)
      throw new OAuthError('invalid_target', 'no permission set of this client covers the resource');
    const asked = scopes.filter((scope) => !isOwnScope(scope));
    const offered = new Set(resource.scopes.map((s) => s.scope));
    // The description never names the refused scopes (as for the agent's allowed_scopes).
    if (!asked.every((scope) => offered.has(scope)))
      throw new OAuthError('invalid_scope', 'a requested scope is not offered by the resource');
    if (!asked.every((scope) => bundled.has(scope)))
      throw new OAuthError(
        'invalid_scope',
        "a requested scope of the resource is not in this client's permission sets",
      );
    const granted = await this.grants.resourceScopes(principal, agent.id, resource.id, now);
    if (granted === undefined || !asked.every((scope) => granted.has(scope))) return { scopes, consented: false };
    if (asked.length > 0) return { scopes, consented: true };
    // None asked: what the person granted for this resource (within the agent's allowed_scopes), and the own scopes asked.
    const given = [...granted].filter((scope) => scopesAllowedFor(agent, [scope])).sort();
    return { scopes: [...given, ...scopes], consented: true };
  }

  /** Union of the scopes the agent's permission sets bundle for the resource; undefined when none covers it. */
  private async bundledScopes(agent: Agent, resource: ProtectedResource): Promise<Set<string> | undefined> {
    const sets = await this.permissionSets.findByIds(agent.permissionSets.map((ref) => ref.permissionSetId));
    const entries = sets.flatMap((set) => set.resourceScopes.filter((entry) => entry.resourceId === resource.id));
    if (entries.length === 0) return undefined;
    return new Set(entries.flatMap((entry) => entry.scopes));
  }

  /**
   * Resources no one registered: each must be a service's protected resource; covered when the
   * person's active grant delegates those services (no grant yet: the consent page), else
   * `access_denied` (the person's grant leaves them out).
   */
  private async decideUnregistered(
    principal: string,
    agent: Agent,
    requested: readonly string[],
    scopes: readonly string[],
    now: Date,
  ): Promise<ResourceConsentDecision> {
    // Services store their protected resources in normal form (the admin API's rule).
    const resources = requested.map((uri) => normaliseResourceUri(uri) ?? uri);
    const ofServices = await this.services.protectedResourcesAmong(resources);
    if (!resources.every((uri) => ofServices.has(uri))) {
      throw new OAuthError(
        'invalid_target',
        'the resource is not registered with this authorization server (an administrator registers it as a protected resource)',
      );
    }
    if (!(await this.grants.hasActive(principal, agent.id, now))) return { scopes, consented: false };
    if (!(await this.grants.delegatesServiceResources(principal, agent.id, resources, now))) {
      throw new OAuthError('access_denied', "the person's grant does not delegate the service of this resource");
    }
    return { scopes, consented: true };
  }
}
