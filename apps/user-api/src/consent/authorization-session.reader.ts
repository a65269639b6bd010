import { ApiError, type Principal } from '@broker/domain';
import { AuthorizationSessionTokens, type AuthorizationSession } from '@broker/oauth-server';
import { Injectable } from '@nestjs/common';

/**
 * Reads the authorization session behind a consent request's session token, for that
 * request only (docs/consent-and-connections.md, "Authorization session token"): invalid or expired, or issued for another
 * agent → 400 `session_expired`; issued for another principal → 403 `forbidden`.
 * Not a Nest guard: the consent and grant services call it once they know the agent.
 */
@Injectable()
export class AuthorizationSessionReader {
  constructor(private readonly tokens: AuthorizationSessionTokens) {}

  /** `lapsedForSeconds`: how long past its expiry the token is still read (0: not at all). */
  async readFor(
    token: string,
    agentId: string,
    principal: Principal,
    lapsedForSeconds = 0,
  ): Promise<AuthorizationSession> {
    const session = await this.tokens.verify(token, lapsedForSeconds);
    if (session === undefined)
      throw new ApiError(
        'session_expired',
        'the authorization session is invalid or has expired: start the authorization again',
      );
    if (session.agentId !== agentId.toLowerCase())
      throw new ApiError('session_expired', 'the authorization session belongs to another agent');
    if (session.principal !== principal.id)
      throw new ApiError('forbidden', 'the authorization session belongs to another user');
    return session;
  }
}
