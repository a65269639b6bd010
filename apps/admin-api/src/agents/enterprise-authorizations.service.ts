import { ApiError, Clock } from '@broker/domain';
import { EnterpriseAuthorizationRevocation } from '@broker/oauth-server';
import {
  AgentRepository,
  EnterpriseAuthorizationRepository,
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
    private readonly revocation: EnterpriseAuthorizationRevocation,
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
    const revoked = await this.revocation.revoke(id, { agentId }, { type: 'admin', id: admin });
    if (revoked === undefined) throw new ApiError('not_found', `no enterprise authorization ${id}`);
  }

  private async assertAgent(agentId: string): Promise<void> {
    if ((await this.agents.findById(agentId)) === undefined)
      throw new ApiError('agent not found', `no agent ${agentId}`);
  }
}
