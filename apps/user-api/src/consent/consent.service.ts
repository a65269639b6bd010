import {
  ApiError,
  Clock,
  type Agent,
  type PermissionSet,
  type Principal,
  type ProtectedResource,
  type RequirementType,
  type Service,
} from '@broker/domain';
import { consentDenied, EventLedger } from '@broker/events';
import {
  AUTHORIZATION_SESSION_RETURN_SECONDS,
  AuthorizationDenial,
  type AuthorizationSession,
} from '@broker/oauth-server';
import {
  AgentRepository,
  Database,
  GrantRepository,
  PermissionSetRepository,
  ProtectedResourceRepository,
  RefreshTokenRepository,
  ServiceRepository,
  SessionRepository,
  type AuthorizationSessionAnswer,
} from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { AuthorizationSessionAnswers } from './authorization-session-answers';
import { AuthorizationSessionReader } from './authorization-session.reader';
import {
  toDelegationSummaryResponse,
  type AgentDetail,
  type AuthorizationContextView,
  type ConsentResourceView,
  type ConsentServiceView,
  type DelegationSummaryResponse,
} from './consent.responses';

/** How strongly a service is required, when several permission sets cover it. */
const STRENGTH: Record<RequirementType, number> = { optional: 0, mandatory: 1, require_all_scopes: 2 };

/** What the consent page shows: the caller's delegations and an agent's detail. */
@Injectable()
export class ConsentService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly permissionSets: PermissionSetRepository,
    private readonly services: ServiceRepository,
    private readonly resources: ProtectedResourceRepository,
    private readonly grants: GrantRepository,
    private readonly sessions: SessionRepository,
    private readonly refreshTokens: RefreshTokenRepository,
    private readonly sessionReader: AuthorizationSessionReader,
    private readonly answers: AuthorizationSessionAnswers,
    private readonly denial: AuthorizationDenial,
    private readonly clock: Clock,
    private readonly database: Database,
    private readonly events: EventLedger,
  ) {}

  /**
   * The user declines the authorization request of the session token: where to send them.
   * The session ends denied (docs/security.md: answered once), only once the redirect is
   * known to be sendable; an answered session is 409 `session_used`, with no redirect. The
   * person's activity shows the refusal (docs/events.md "Event kinds": `consent.denied`).
   */
  async deny(principal: Principal, agentId: string, sessionToken: string | undefined): Promise<string> {
    if (sessionToken === undefined)
      throw new ApiError('session_expired', 'a session_token is required to decline an authorization request');
    const agent = await this.agents.findById(agentId);
    if (agent === undefined) throw new ApiError('not_found', `no agent ${agentId}`);
    const session = await this.sessionReader.readFor(sessionToken, agent.id, principal);
    await this.answers.assertPending(session);
    const redirect = await this.denial.redirectFor(session);
    // The answer and its `consent.denied` event commit together: a losing second answer (409) records nothing.
    await this.database.transaction(async (manager) => {
      await this.answers.answer(session, principal, 'denied', manager);
      await this.events.record(consentDenied(principal.id, agent.id, requestedResources(session)), manager);
    });
    return redirect;
  }

  /**
   * The consent page let the request expire: it ends at the client's redirect_uri with
   * `error=access_denied` (RFC 6749 §4.1.2.1; `iss`, RFC 9207), so the application waiting for
   * it hears back instead of waiting on. The token is read up to an hour past its expiry (and
   * before it: the page's timer may run a little ahead of this clock); the redirect_uri is
   * checked against the registration again, as for Deny. Answered once like Allow and Deny (the
   * answer is `error`); nothing is recorded in the person's activity, since they decided nothing.
   */
  async expire(principal: Principal, agentId: string, sessionToken: string | undefined): Promise<string> {
    if (sessionToken === undefined)
      throw new ApiError('session_expired', 'a session_token is required to end an authorization request');
    const agent = await this.agents.findById(agentId);
    if (agent === undefined) throw new ApiError('not_found', `no agent ${agentId}`);
    const session = await this.sessionReader.readFor(
      sessionToken,
      agent.id,
      principal,
      AUTHORIZATION_SESSION_RETURN_SECONDS,
    );
    await this.answers.assertPending(session);
    const redirect = await this.denial.redirectFor(
      session,
      'the authorization request expired before the user answered',
    );
    await this.answers.answer(session, principal, 'error');
    return redirect;
  }

  async delegations(principal: Principal): Promise<DelegationSummaryResponse[]> {
    const now = this.clock.now();
    const [summaries, live] = await Promise.all([
      this.grants.summaries(principal.id, now),
      this.refreshTokens.liveFamiliesByAgent(principal.id, now),
    ]);
    return summaries.map((summary) => toDelegationSummaryResponse(summary, live.get(summary.agentId) ?? 0));
  }

  async agentDetail(principal: Principal, agentId: string, sessionToken: string | undefined): Promise<AgentDetail> {
    const agent = await this.agents.findById(agentId);
    if (agent === undefined) throw new ApiError('not_found', `no agent ${agentId}`);
    const session =
      sessionToken === undefined ? undefined : await this.sessionReader.readFor(sessionToken, agent.id, principal);
    const found = new Map(
      (await this.permissionSets.findByIds(agent.permissionSets.map((ref) => ref.permissionSetId))).map((set) => [
        set.id,
        set,
      ]),
    );
    // In the agent's own order of assignment.
    const sets = agent.permissionSets
      .map((ref) => found.get(ref.permissionSetId))
      .filter((s): s is PermissionSet => s !== undefined);
    const serviceIds = [...new Set(sets.flatMap((set) => set.serviceScopes.map((entry) => entry.serviceId)))];
    const byId = new Map((await this.services.findByIds(serviceIds)).map((service) => [service.id, service]));
    const services = serviceIds.map((id) => byId.get(id)).filter((s): s is Service => s !== undefined);
    const resourceIds = [...new Set(sets.flatMap((set) => set.resourceScopes.map((entry) => entry.resourceId)))];
    const [connected, registered, grant] = await Promise.all([
      this.sessions.connectedServiceIds(principal.id, serviceIds),
      this.resources.findByIds(resourceIds),
      resourceIds.length === 0 ? undefined : this.grants.findActive(principal.id, agent.id, this.clock.now()),
    ]);
    const resourcesById = new Map(registered.map((resource) => [resource.id, resource]));
    const granted = new Set(grant?.resourceDelegations.map((d) => d.resourceId) ?? []);
    const requested = new Set(session === undefined ? [] : requestedResources(session));
    return {
      agent: agentView(agent),
      permission_sets: sets.map((set) => ({
        id: set.id,
        name: set.name,
        description: set.description,
        requirement_type:
          agent.permissionSets.find((ref) => ref.permissionSetId === set.id)?.requirementType ?? 'mandatory',
        services: set.serviceScopes.map((entry) => ({ service_id: entry.serviceId, scopes: [...entry.scopes] })),
        resources: set.resourceScopes.map((entry) => ({ resource_id: entry.resourceId, scopes: [...entry.scopes] })),
      })),
      services: services.map((service) => serviceView(service, sets, connected.has(service.id))),
      resources: resourceIds
        .map((id) => resourcesById.get(id))
        .filter((r): r is ProtectedResource => r !== undefined)
        .map((resource) => resourceView(resource, sets, granted.has(resource.id), requested.has(resource.resourceUri))),
      authorization_context: session
        ? authorizationContext(session, await this.answers.answerOf(session), this.clock.now())
        : null,
      cimd: session?.cimd ? { ...session.cimd, requested_scopes: [...session.cimd.requested_scopes] } : null,
    };
  }
}

/**
 * The request; `resources` (RFC 8707: the MCP servers or APIs the token will be for)
 * read from the original URL, which the authorization server checked and sealed in the
 * session; `answered` once the session was answered (docs/security.md).
 */
function authorizationContext(
  session: AuthorizationSession,
  answer: AuthorizationSessionAnswer | undefined,
  now: Date,
): AuthorizationContextView {
  const context: AuthorizationContextView = {
    agent_id: session.agentId,
    principal: session.principal,
    original_url: session.originalUrl,
    expires_at: session.expiresAt.toISOString(),
    expires_in: Math.max(0, Math.floor((session.expiresAt.getTime() - now.getTime()) / 1000)),
  };
  const resources = requestedResources(session);
  if (resources.length > 0) context.resources = resources;
  if (answer !== undefined)
    context.answered = { decision: answer.decision, answered_at: answer.answeredAt.toISOString() };
  return context;
}

/** The RFC 8707 resources the session's authorization request names, de-duplicated in order. */
function requestedResources(session: AuthorizationSession): string[] {
  return [...new Set(new URL(session.originalUrl).searchParams.getAll('resource'))];
}

/** The strongest of the requirements, `optional` when there is none. */
function strongest(requirements: readonly RequirementType[]): RequirementType {
  return requirements.reduce<RequirementType>(
    (best, requirement) => (STRENGTH[requirement] > STRENGTH[best] ? requirement : best),
    'optional',
  );
}

/** Scopes as people read them: sorted, de-duplicated, each with its description (or itself when it has none). */
export function described(
  scopes: readonly string[],
  descriptions: readonly { scope: string; description: string }[],
): { scope: string; description: string }[] {
  const byScope = new Map(descriptions.map((s) => [s.scope, s.description]));
  return [...new Set(scopes)].sort().map((scope) => ({ scope, description: byScope.get(scope) || scope }));
}

/** A protected resource on the consent page, by the rule `serviceView` follows for services. */
function resourceView(
  resource: ProtectedResource,
  sets: readonly PermissionSet[],
  granted: boolean,
  requested: boolean,
): ConsentResourceView {
  const entries = sets.flatMap((set) => set.resourceScopes.filter((entry) => entry.resourceId === resource.id));
  return {
    id: resource.id,
    display_name: resource.displayName,
    description: resource.description,
    logo_url: resource.logoUrl,
    resource_uri: resource.resourceUri,
    requirement_type: strongest(entries.map((entry) => entry.requirementType)),
    permissions: described(
      entries.flatMap((entry) => entry.scopes),
      resource.scopes,
    ),
    granted,
    requested,
  };
}

function agentView(agent: Agent): AgentDetail['agent'] {
  return {
    id: agent.id,
    display_name: agent.displayName,
    description: agent.description,
    canonical_id: agent.canonicalId,
    logo_url: agent.logoUrl,
    governance_url: agent.governanceUrl,
    user_documentation_url: agent.userDocumentationUrl,
    agent_interface_url: agent.agentInterfaceUrl,
    suspended: agent.suspension !== null,
  };
}

/**
 * A service on the consent page: the strongest requirement among the agent's permission
 * sets covering it, and as permissions the sorted, de-duplicated union of their scopes
 * (required for `require_all_scopes`, and the same rule keeps
 * every other service's list deterministic), each with its human-readable description.
 */
function serviceView(service: Service, sets: readonly PermissionSet[], connected: boolean): ConsentServiceView {
  const entries = sets.flatMap((set) => set.serviceScopes.filter((entry) => entry.serviceId === service.id));
  return {
    id: service.id,
    display_name: service.displayName,
    logo_url: service.logoUrl,
    requirement_type: strongest(entries.map((entry) => entry.requirementType)),
    connection_status: connected ? 'connected' : 'not_connected',
    permissions: described(
      entries.flatMap((entry) => entry.scopes),
      service.scopes,
    ),
  };
}
