import { AuditLog } from '@broker/audit';
import { ApiError, Clock } from '@broker/domain';
import { enterpriseAccessRevoked, EventLedger } from '@broker/events';
import {
  AgentRepository,
  EnterpriseAuthorizationRepository,
  TokenStateRepository,
  type EnterpriseAuthorizationView,
} from '@broker/persistence';
import { Injectable } from '@nestjs/common';

/**
 * The administrator's side of enterprise-managed authorization (docs/oauth2.md "Enterprise-managed
 * authorization"): an agent's live enterprise authorizations, and revoking one. A revocation ends
 * its tokens on introspection at once; to stop the organisation allowing the agent again, change
 * the identity provider's policy (or delete the agent).
 */
@Injectable()
export class AgentEnterpriseAuthorizationsService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly authorizations: EnterpriseAuthorizationRepository,
    private readonly tokenState: TokenStateRepository,
    private readonly events: EventLedger,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** The agent's live enterprise authorizations (one person's when `principal` is given), newest first. */
  async live(agentId: string, principal: string | undefined): Promise<EnterpriseAuthorizationView[]> {
    await this.assertAgent(agentId);
    return this.authorizations.live({ agentId, principal }, this.clock.now());
  }

  /** Revokes one live enterprise authorization of the agent, the admin its actor; 404 `not_found` otherwise (`agent not found` for an unknown agent). */
  async revoke(admin: string, agentId: string, id: string): Promise<void> {
    await this.assertAgent(agentId);
    const revoked = await this.authorizations.revoke(id, { agentId }, admin, this.clock.now(), (row, manager) =>
      this.events.record(enterpriseAccessRevoked(row, { type: 'admin', id: admin }), manager),
    );
    if (revoked === undefined) throw new ApiError('not_found', `no enterprise authorization ${id}`);
    // Committed: this process's introspection reads its tokens again at once (other replicas hear the table's trigger).
    this.tokenState.familyRevoked(revoked.id);
    this.audit.record('enterprise_access_revoked', {
      principal: revoked.principal,
      agent_id: revoked.agentId,
      enterprise_access_id: revoked.id,
      issuer: revoked.issuer,
      resource: revoked.resourceUri,
      actor_type: 'admin',
      admin,
      outcome: 'revoked',
    });
  }

  private async assertAgent(agentId: string): Promise<void> {
    if ((await this.agents.findById(agentId)) === undefined)
      throw new ApiError('agent not found', `no agent ${agentId}`);
  }
}
