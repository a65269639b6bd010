import { OAuthError } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import type { AuthorizationSession } from '../authorization-session/authorization-session-tokens';
import { AccessTokenIssuer } from '../token/access-token-issuer';
import { assertRedirectUriRegistered, clientRedirect } from './authorize-rules';

/**
 * The user declined consent: the authorization request ends at the client's redirect_uri
 * with `error=access_denied`, its `state` (RFC 6749 §4.1.2.1) and `iss` (RFC 9207). The
 * redirect_uri comes from the signed authorization session and is checked against the
 * registration again.
 */
@Injectable()
export class AuthorizationDenial {
  constructor(
    private readonly agents: AgentRepository,
    private readonly tokens: AccessTokenIssuer,
  ) {}

  /** `description` says why (RFC 6749 §4.1.2.1 `error_description`): the user denied it, or it expired. */
  async redirectFor(
    session: AuthorizationSession,
    description = 'the user denied the authorization request',
  ): Promise<string> {
    const original = new URL(session.originalUrl);
    const redirectUri = original.searchParams.get('redirect_uri') ?? undefined;
    const agent = await this.agents.findById(session.agentId);
    if (agent === undefined) throw new OAuthError('invalid_client', 'the client no longer exists');
    const validated =
      session.cimd !== null
        ? redirectUri === session.cimd.redirect_uri
          ? redirectUri
          : undefined
        : assertRedirectUriRegistered(agent, redirectUri);
    if (validated === undefined)
      throw new OAuthError('invalid_redirect_uri', 'redirect_uri is not registered for this client');
    return clientRedirect(validated, this.tokens.issuer, {
      error: 'access_denied',
      error_description: description,
      state: original.searchParams.get('state') ?? undefined,
    });
  }
}
