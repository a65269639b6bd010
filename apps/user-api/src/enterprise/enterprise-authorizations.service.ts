import { ApiError, Clock, type Principal } from '@broker/domain';
import { EnterpriseAuthorizationRepository, type EnterpriseAuthorizationView } from '@broker/persistence';
import { EnterpriseAuthorizationRevocation } from '@broker/oauth-server';
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
    private readonly revocation: EnterpriseAuthorizationRevocation,
    private readonly clock: Clock,
  ) {}

  /** The caller's live enterprise authorizations, newest first. */
  live(principal: Principal): Promise<EnterpriseAuthorizationView[]> {
    return this.authorizations.live({ principal: principal.id }, this.clock.now());
  }

  /** Revokes one of the caller's live enterprise authorizations; 404 `not_found` for any other id. */
  async revoke(principal: Principal, id: string): Promise<void> {
    const revoked = await this.revocation.revoke(
      id,
      { principal: principal.id },
      { type: 'principal', id: principal.id },
    );
    if (revoked === undefined) throw new ApiError('not_found', `no enterprise authorization ${id}`);
  }
}
