import { ApprovalDecisions } from '@broker/approvals';
import { AuditLog } from '@broker/audit';
import { ApiError, Clock } from '@broker/domain';
import { EventLedger, grantEvent } from '@broker/events';
import { AdminGrantRepository, AgentRepository, GrantRepository, type AdminGrantView } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import type { AdminGrantQuery } from './admin-grant.query';

/** At most this many grants in one answer of `GET /api/grants`. */
export const MAX_ADMIN_GRANTS = 500;

/**
 * People's grants for administrators (docs/admin-api.md "Grants"): listed per agent and per
 * person, and revoked exactly as the person's own revocation does (refresh token families
 * ended, remembered tool decisions ended, the exchange refused at once on every replica), the
 * administrator the actor of the events.
 */
@Injectable()
export class AdminGrantsService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly adminGrants: AdminGrantRepository,
    private readonly grants: GrantRepository,
    private readonly approvals: ApprovalDecisions,
    private readonly ledger: EventLedger,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  list(query: AdminGrantQuery): Promise<AdminGrantView[]> {
    return this.adminGrants.list(
      { agentId: query.agent_id, principal: query.principal, serviceId: query.service_id },
      this.clock.now(),
      MAX_ADMIN_GRANTS,
    );
  }

  async ofAgent(agentId: string): Promise<AdminGrantView[]> {
    await this.assertAgent(agentId);
    return this.adminGrants.list({ agentId }, this.clock.now(), MAX_ADMIN_GRANTS);
  }

  /** Revokes one person's active grant to the agent; 404 `grant not found` when `grantId` is none. */
  async revoke(admin: string, agentId: string, grantId: string): Promise<void> {
    await this.assertAgent(agentId);
    const principal = await this.adminGrants.activePrincipal(agentId, grantId, this.clock.now());
    if (principal === undefined || !(await this.revokeOf(admin, principal, agentId)))
      throw new ApiError('grant not found', `no active grant ${grantId} of agent ${agentId}`);
  }

  /** Revokes every active grant of the agent (an incident), one person at a time; how many were revoked. */
  async revokeAll(admin: string, agentId: string): Promise<number> {
    await this.assertAgent(agentId);
    let revoked = 0;
    for (const principal of await this.adminGrants.activePrincipals(agentId, this.clock.now()))
      if (await this.revokeOf(admin, principal, agentId)) revoked += 1;
    return revoked;
  }

  /** The person's revocation, by an administrator: false when the grant had ended meanwhile. */
  private async revokeOf(admin: string, principal: string, agentId: string): Promise<boolean> {
    const now = this.clock.now();
    const actor = { type: 'admin', id: admin } as const;
    let approvalsEnded = 0;
    const deleted = await this.grants.deleteActive(principal, agentId, now, async (_grant, manager) => {
      // The person is the event's subject (it is in their activity, "by an administrator"); the admin its actor.
      await this.ledger.record({ ...grantEvent('grant.revoked', principal, agentId, {}), actor }, manager);
      approvalsEnded = await this.approvals.endWithGrant(
        { id: principal, source: 'header' },
        agentId,
        now,
        manager,
        actor,
      );
    });
    if (deleted === undefined) return false;
    this.audit.record('grant_deleted', {
      principal,
      agent_id: agentId,
      admin,
      approvals_ended: approvalsEnded,
      permission_set_ids: [...new Set(deleted.delegations.map((d) => d.permissionSetId))],
      service_ids: [...new Set(deleted.delegations.map((d) => d.serviceId))],
      resource_ids: [...new Set(deleted.resourceDelegations.map((d) => d.resourceId))],
      outcome: 'revoked_by_admin',
    });
    return true;
  }

  private async assertAgent(agentId: string): Promise<void> {
    if ((await this.agents.findById(agentId)) === undefined)
      throw new ApiError('agent not found', `no agent ${agentId}`);
  }
}
