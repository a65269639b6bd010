import { OAuthError, scopesAllowedFor, type Agent } from '@broker/domain';
import { RefreshTokenRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { ResourceIndicators } from '../resource/resource-indicators';
import { AccessTokenIssuer, type TokenResponse } from './access-token-issuer';
import { presentedClient } from './client-authentication';
import { ClientAuthenticator } from './client-authenticator';
import { DpopProofs } from '../dpop/dpop-proofs';
import type { GrantStrategy, TokenRequestContext } from './grant-strategy';
import { refreshTokenDigest, RefreshTokens, withRefreshToken } from './refresh-tokens';
import { parseScope } from './scopes';
import { required, type TokenForm } from './token-form';

/**
 * `refresh_token` (RFC 6749 §6, OAuth 2.1 §4.3), local: the client that holds the token
 * (authenticated when confidential, by client_id when public, by its metadata document URL
 * when it redeemed the code with one) gets a new access token and the token's successor; the
 * token itself is spent. `scope` may only narrow (RFC 6749 §6), `resource` picks one of the
 * family's resources (RFC 8707 §2.2); the successor keeps the family's scope and resources.
 * A family whose agent registration no longer allows its scope or resources is ended.
 */
@Injectable()
export class RefreshTokenGrant implements GrantStrategy {
  readonly grantType = 'refresh_token';

  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly refreshTokens: RefreshTokens,
    private readonly repository: RefreshTokenRepository,
    private readonly tokens: AccessTokenIssuer,
    private readonly resourcePolicy: ResourceIndicators,
    private readonly dpop: DpopProofs,
  ) {}

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenResponse> {
    const presented = presentedClient(context.authorization, form);
    const documentUrl = this.clients.documentUrl(presented);
    const client =
      documentUrl === undefined
        ? await this.clients.authenticatePresented(presented, { allowPublic: true })
        : undefined;
    const value = required(form, 'refresh_token');
    const agent = client?.agent ?? (await this.documentClientAgent(value, documentUrl as string));
    const scope = form.get('scope');
    const scopes = scope === undefined ? undefined : parseScope(scope);
    const resource = form.get('resource');
    if (resource !== undefined) this.resourcePolicy.assertAllowed(resource, agent);
    // RFC 9449 §5: the new access token is bound to the proof's key; a bound family needs that same key.
    const jkt = await this.dpop.forTokenRequest(context.dpop, agent.dpopBoundAccessTokens);
    const { value: next, record } = await this.refreshTokens.rotate(
      value,
      {
        agent,
        credentialSha256: client?.credentialSha256 ?? null,
        clientIdUrl: documentUrl ?? null,
        dpopJkt: jkt ?? null,
      },
      { scopes, resource },
    );
    const tokenScopes = scopes ?? record.scopes;
    const resources = resource === undefined ? record.resources : [resource];
    if (!this.stillAllowed(agent, tokenScopes, resources)) {
      await this.refreshTokens.end(record);
      throw new OAuthError(
        'invalid_grant',
        "the client's registration no longer allows this refresh token's scope or resources",
      );
    }
    const response = await this.tokens.issue({
      agent,
      principal: record.principal,
      scopes: tokenScopes,
      grantType: this.grantType,
      resources,
      familyId: record.familyId,
      // A metadata-document client's access token names its URL (RFC 7009 §2.1, RFC 7662 §2.1: whose token it is).
      ...(record.clientIdUrl === null ? {} : { clientIdUrl: record.clientIdUrl }),
      jkt,
    });
    return withRefreshToken(response, next);
  }

  /** A metadata-document client: the agent its token was issued to, if that agent still lists the URL. */
  private async documentClientAgent(value: string, documentUrl: string): Promise<Agent> {
    const holder = await this.repository.holderOf(refreshTokenDigest(value));
    if (holder === undefined || holder.clientIdUrl !== documentUrl)
      throw new OAuthError('invalid_grant', 'the refresh token is invalid or was issued to another client');
    return this.clients.documentClientAgent(holder.agentId, documentUrl);
  }

  /** The agent's allowed_scopes and allowed_resources (and the resource policy) still cover the new access token. */
  private stillAllowed(agent: Agent, scopes: readonly string[], resources: readonly string[]): boolean {
    if (!scopesAllowedFor(agent, scopes)) return false;
    try {
      this.resourcePolicy.assertAgentAllows(resources, agent);
      return true;
    } catch (error) {
      if (error instanceof OAuthError) return false;
      throw error;
    }
  }
}
