import { AuditLog } from '@broker/audit';
import { ApiError, Clock, type Principal } from '@broker/domain';
import { enterpriseAccessRevoked, EventLedger } from '@broker/events';
import {
  EnterpriseAuthorizationRepository,
  TokenStateRepository,
  type EnterpriseAuthorizationView,
} from '@broker/persistence';
import { Injectable } from '@nestjs/common';

/**
 * The person's side of enterprise-managed authorization (docs/oauth2.md "Enterprise-managed
 * authorization"): what their organisation allowed agents through its identity provider, and
 * revoking it. A revocation ends the authorization's tokens on introspection at once; the
 * organisation's identity provider can allow the agent again with a new assertion.
 */
@Injectable()
export class EnterpriseAuthorizationsService {
  constructor(
    private readonly authorizations: EnterpriseAuthorizationRepository,
    private readonly tokenState: TokenStateRepository,
    private readonly events: EventLedger,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** The caller's live enterprise authorizations, newest first. */
  live(principal: Principal): Promise<EnterpriseAuthorizationView[]> {
    return this.authorizations.live({ principal: principal.id }, this.clock.now());
  }

  /** Revokes one of the caller's live enterprise authorizations; 404 `not_found` for any other id. */
  async revoke(principal: Principal, id: string): Promise<void> {
    const revoked = await this.authorizations.revoke(
      id,
      { principal: principal.id },
      principal.id,
      this.clock.now(),
      (row, manager) =>
        this.events.record(enterpriseAccessRevoked(row, { type: 'principal', id: principal.id }), manager),
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
      actor_type: 'principal',
      outcome: 'revoked',
    });
  }
}
