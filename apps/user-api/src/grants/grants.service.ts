import { ApprovalDecisions } from '@broker/approvals';
import { AuditLog } from '@broker/audit';
import {
  ApiError,
  Clock,
  Random,
  redirectHostOf,
  type Agent,
  type FieldIssue,
  type Grant,
  type GrantDelegation,
  type GrantResourceDelegation,
  type PermissionSet,
  type Principal,
} from '@broker/domain';
import { EventLedger, grantEvent } from '@broker/events';
import { AgentRepository, GrantClientRepository, GrantRepository, PermissionSetRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { AuthorizationSessionAnswers } from '../consent/authorization-session-answers';
import { AuthorizationSessionReader } from '../consent/authorization-session.reader';
import type { GrantDto } from './grant.dto';
import { parseGrantedPermissionSets, parseValidUntil, type RequestedDelegation } from './grant-request';

/** The outcome of a grant POST. */
export type GrantWrite =
  | { readonly kind: 'deleted' }
  | { readonly kind: 'saved'; readonly grant: Grant; readonly redirectUrl: string | undefined };

/**
 * Grants: one per (principal, agent), created or replaced wholesale, deleted by its owner.
 * Every change writes one credential-free audit record, and its ledger event in
 * the change's own transaction.
 */
@Injectable()
export class GrantsService {
  constructor(
    private readonly grants: GrantRepository,
    private readonly grantClients: GrantClientRepository,
    private readonly agents: AgentRepository,
    private readonly permissionSets: PermissionSetRepository,
    private readonly sessionReader: AuthorizationSessionReader,
    private readonly answers: AuthorizationSessionAnswers,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly events: EventLedger,
    private readonly approvals: ApprovalDecisions,
  ) {}

  async active(principal: Principal, agentId: string): Promise<Grant[]> {
    await this.assertAgent(agentId);
    const grant = await this.grants.findActive(principal.id, agentId, this.clock.now());
    return grant ? [grant] : [];
  }

  async write(
    principal: Principal,
    agentId: string,
    dto: GrantDto,
    sessionToken: string | undefined,
  ): Promise<GrantWrite> {
    const found = await this.assertAgent(agentId);
    const agent = found.id;
    const session =
      sessionToken === undefined ? undefined : await this.sessionReader.readFor(sessionToken, agent, principal);
    // docs/security.md: an authorization session is answered once; an answered one changes nothing.
    if (session !== undefined) await this.answers.assertPending(session);
    const now = this.clock.now();
    // The whole body is validated before anything is written: a bad valid_until never deletes.
    const requested = parseGrantedPermissionSets(dto.granted_permission_sets);
    const validUntil = parseValidUntil(dto.valid_until, now);
    if (requested.size === 0) {
      let approvalsEnded = 0;
      // An active grant removed is a revocation; an expired one, its removal (grant.expired).
      await this.grants.deleteAny(principal.id, agent, now, async (deleted, manager) => {
        await (deleted.validUntil !== null && deleted.validUntil.getTime() <= now.getTime()
          ? this.events.record(
              grantEvent('grant.expired', principal.id, agent, { valid_until: deleted.validUntil.toISOString() }),
              manager,
            )
          : this.events.record(grantEvent('grant.revoked', principal.id, agent, {}), manager));
        approvalsEnded = await this.approvals.endWithGrant(principal, agent, now, manager);
      });
      this.audit.record('grant_deleted', {
        principal: principal.id,
        agent_id: agent,
        approvals_ended: approvalsEnded,
        outcome: 'deleted_by_empty_grant',
      });
      return { kind: 'deleted' };
    }
    assertAllowable(found);
    const { delegations, resourceDelegations } = await this.resolve(found, requested);
    const serviceIds = [...new Set(delegations.map((d) => d.serviceId))];
    const resourceIds = [...new Set(resourceDelegations.map((d) => d.resourceId))];
    const details = {
      permission_set_ids: [...requested.keys()],
      service_ids: serviceIds,
      resource_ids: resourceIds,
      valid_until: validUntil?.toISOString() ?? null,
    };
    const { grant, created } = await this.grants.upsert(
      this.random.uuid(),
      principal.id,
      agent,
      validUntil,
      delegations,
      resourceDelegations,
      now,
      async (result, manager) => {
        // A grant that starts now (none before, or one past its valid_until) starts with no remembered decision:
        // what an expired grant left behind ends here (docs/approvals.md "Grants and approvals").
        if (result.started) await this.approvals.endWithGrant(principal, agent, now, manager);
        // The session ends allowed in the grant's transaction: of two Allows racing, the loser's grant rolls back (409).
        if (session !== undefined) await this.answers.answer(session, principal, 'allowed', manager);
        // docs/security.md: consent to a document client is remembered for its URL and the redirect host the page named.
        if (session?.cimd)
          await this.grantClients.remember(
            result.grant.id,
            session.cimd.client_id_url,
            redirectHostOf(session.cimd.redirect_uri),
            now,
            manager,
          );
        await this.events.record(
          grantEvent(result.created ? 'grant.created' : 'grant.replaced', principal.id, agent, details),
          manager,
        );
      },
    );
    this.audit.record(created ? 'grant_created' : 'grant_replaced', {
      principal: principal.id,
      agent_id: agent,
      permission_set_ids: [...requested.keys()],
      service_ids: serviceIds,
      resource_ids: resourceIds,
      valid_until: validUntil?.toISOString() ?? null,
      outcome: created ? 'created' : 'replaced',
    });
    return { kind: 'saved', grant, redirectUrl: session?.originalUrl };
  }

  /**
   * Only the owner's active grant can be revoked; revoking does not end third-party sessions.
   * It ends, in the same transaction, every live tool approval of the person and agent
   * (docs/approvals.md "Grants and approvals").
   */
  async revoke(principal: Principal, agentId: string): Promise<void> {
    const agent = (await this.assertAgent(agentId)).id;
    const now = this.clock.now();
    let approvalsEnded = 0;
    const deleted = await this.grants.deleteActive(principal.id, agent, now, async (_grant, manager) => {
      await this.events.record(grantEvent('grant.revoked', principal.id, agent, {}), manager);
      approvalsEnded = await this.approvals.endWithGrant(principal, agent, now, manager);
    });
    if (deleted === undefined) throw new ApiError('not_found', `no grant for agent ${agent}`);
    this.audit.record('grant_deleted', {
      principal: principal.id,
      agent_id: agent,
      approvals_ended: approvalsEnded,
      permission_set_ids: [...new Set(deleted.delegations.map((d) => d.permissionSetId))],
      service_ids: [...new Set(deleted.delegations.map((d) => d.serviceId))],
      resource_ids: [...new Set(deleted.resourceDelegations.map((d) => d.resourceId))],
      outcome: 'revoked',
    });
  }

  /** What every grant event of the principal's own change says (the kind and details are added). */
  /** 404 for an unknown agent, 403 for a suspended one: what allowing an agent checks first. */
  async assertAllowable(agentId: string): Promise<void> {
    assertAllowable(await this.assertAgent(agentId));
  }

  private async assertAgent(agentId: string): Promise<Agent> {
    const agent = await this.agents.findById(agentId);
    if (agent === undefined) throw new ApiError('not_found', `no agent ${agentId}`);
    return agent;
  }

  /**
   * Every permission set exists and is assigned to the
   * agent; every id under it is a service or a protected resource of that set; every
   * delegated service ends up with at least one scope (the union over the sets delegating
   * it). The consented scopes are stored with the grant, so a later edit of a permission set
   * never widens it silently.
   */
  private async resolve(
    agent: Agent,
    requested: RequestedDelegation,
  ): Promise<{ delegations: GrantDelegation[]; resourceDelegations: GrantResourceDelegation[] }> {
    const assigned = new Set(agent.permissionSets.map((ref) => ref.permissionSetId));
    const sets = new Map(
      (await this.permissionSets.findByIds([...requested.keys()].filter((id) => assigned.has(id)))).map((set) => [
        set.id,
        set,
      ]),
    );
    const issues: FieldIssue[] = [];
    const delegations: GrantDelegation[] = [];
    const resourceDelegations: GrantResourceDelegation[] = [];
    for (const [setId, serviceIds] of requested) {
      const field = `granted_permission_sets.${setId}`;
      const set: PermissionSet | undefined = sets.get(setId);
      if (set === undefined) {
        issues.push({
          field,
          problem: assigned.has(setId) ? 'no such permission set' : 'permission set is not assigned to this agent',
        });
        continue;
      }
      for (const id of serviceIds) {
        const entry = set.serviceScopes.find((e) => e.serviceId === id);
        const resource = entry === undefined ? set.resourceScopes.find((e) => e.resourceId === id) : undefined;
        if (entry !== undefined) delegations.push({ permissionSetId: setId, serviceId: id, scopes: [...entry.scopes] });
        else if (resource !== undefined)
          resourceDelegations.push({ permissionSetId: setId, resourceId: id, scopes: [...resource.scopes] });
        else issues.push({ field, problem: `service or resource ${id} is not part of this permission set` });
      }
    }
    if (issues.length > 0)
      throw new ApiError('invalid_permission_set', issues.map((i) => `${i.field}: ${i.problem}`).join('; '), issues);
    const scopesByService = new Map<string, Set<string>>();
    for (const d of delegations) {
      const scopes = scopesByService.get(d.serviceId) ?? new Set<string>();
      d.scopes.forEach((scope) => scopes.add(scope));
      scopesByService.set(d.serviceId, scopes);
    }
    const scopeless = [...scopesByService].filter(([, scopes]) => scopes.size === 0).map(([serviceId]) => serviceId);
    if (scopeless.length > 0) {
      throw new ApiError(
        'invalid scopes',
        `no scope would be delegated for service ${scopeless.join(', ')}`,
        scopeless.map((id) => ({ field: 'granted_permission_sets', problem: `service ${id} has no scope` })),
      );
    }
    return { delegations, resourceDelegations };
  }
}

/**
 * docs/admin-api.md "Suspending an agent": nobody allows a suspended agent anything (revoking it, and denying its
 * requests, stay open).
 */
function assertAllowable(agent: Agent): void {
  if (agent.suspension !== null)
    throw new ApiError(
      'forbidden',
      `agent suspended: your administrators suspended ${agent.displayName}; it can be revoked, not allowed`,
    );
}
