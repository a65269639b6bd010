import { ApiError, type Principal } from '@broker/domain';
import { AuthorizationSessionTokens, type AuthorizationSession } from '@broker/oauth-server';
import { Injectable } from '@nestjs/common';

/**
 * Checks an authorization session token against the consent request (SPEC.md "POST grants
 * results" 5): invalid or expired, or issued for another agent → 400 `session_expired`;
 * issued for another principal → 403 `forbidden`.
 */
@Injectable()
export class AuthorizationSessionCheck {
  constructor(private readonly tokens: AuthorizationSessionTokens) {}

  async assertFor(token: string, agentId: string, principal: Principal): Promise<AuthorizationSession> {
    const session = await this.tokens.verify(token);
    if (session === undefined) throw new ApiError('session_expired', 'the authorization session is invalid or has expired: start the authorization again');
    if (session.agentId !== agentId.toLowerCase()) throw new ApiError('session_expired', 'the authorization session belongs to another agent');
    if (session.principal !== principal.id) throw new ApiError('forbidden', 'the authorization session belongs to another user');
    return session;
  }
}
