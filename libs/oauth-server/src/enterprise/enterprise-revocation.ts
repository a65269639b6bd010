import { AuditLog } from '@broker/audit';
import { Clock } from '@broker/domain';
import { enterpriseAccessRevoked, EventLedger } from '@broker/events';
import {
  EnterpriseAuthorizationRepository,
  TokenStateRepository,
  type EnterpriseAuthorization,
  type EnterpriseAuthorizationOwner,
} from '@broker/persistence';
import { Injectable } from '@nestjs/common';

/** Who revokes what an organisation allowed: the person it concerns, or an admin (by their principal). */
export interface EnterpriseRevoker {
  readonly type: 'principal' | 'admin';
  readonly id: string;
}

/**
 * Revoking an enterprise authorization (docs/oauth2.md "Enterprise-managed authorization"), for
 * the person's API and the admin's alike: the row, with its `enterprise_access.revoked` event in
 * the same transaction; then this process's introspection forgets the tokens' facts at once
 * (other replicas hear the table's trigger) and the audit record is written.
 */
@Injectable()
export class EnterpriseAuthorizationRevocation {
  constructor(
    private readonly authorizations: EnterpriseAuthorizationRepository,
    private readonly tokenState: TokenStateRepository,
    private readonly events: EventLedger,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** The revoked authorization; undefined when `id` is none of `owner`'s live ones. */
  async revoke(
    id: string,
    owner: EnterpriseAuthorizationOwner,
    by: EnterpriseRevoker,
  ): Promise<EnterpriseAuthorization | undefined> {
    const revoked = await this.authorizations.revoke(id, owner, by.id, this.clock.now(), (row, manager) =>
      this.events.record(enterpriseAccessRevoked(row, by), manager),
    );
    if (revoked === undefined) return undefined;
    this.tokenState.familyRevoked(revoked.id);
    this.audit.record('enterprise_access_revoked', {
      principal: revoked.principal,
      agent_id: revoked.agentId,
      enterprise_access_id: revoked.id,
      issuer: revoked.issuer,
      resource: revoked.resourceUri,
      actor_type: by.type,
      ...(by.type === 'admin' ? { admin: by.id } : {}),
      outcome: 'revoked',
    });
    return revoked;
  }
}
