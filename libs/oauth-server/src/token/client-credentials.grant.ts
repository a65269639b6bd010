import { Clock, OAuthError } from '@broker/domain';
import { ProtectedResourceRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { ResourceIndicators } from '../resource/resource-indicators';
import { AccessTokenIssuer, type TokenResponse } from './access-token-issuer';
import { ClientAuthenticator } from './client-authenticator';
import { DpopProofs } from '../dpop/dpop-proofs';
import type { GrantStrategy, TokenRequestContext } from './grant-strategy';
import { assertScopesAllowed, parseScope } from './scopes';
import type { TokenForm } from './token-form';

/** `client_credentials` (RFC 6749 §4.4), local: the agent's broker-issued secret buys a token for itself (for one RFC 8707 `resource`, when named). */
@Injectable()
export class ClientCredentialsGrant implements GrantStrategy {
  readonly grantType = 'client_credentials';

  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly tokens: AccessTokenIssuer,
    private readonly resourcePolicy: ResourceIndicators,
    private readonly catalog: ProtectedResourceRepository,
    private readonly clock: Clock,
    private readonly dpop: DpopProofs,
  ) {}

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenResponse> {
    const { agent } = await this.clients.authenticate(context.authorization, form, { allowPublic: false });
    const scopes = parseScope(form.get('scope'));
    assertScopesAllowed(agent, scopes);
    // RFC 9449 §5: a valid proof binds the token to its key.
    const jkt = await this.dpop.forTokenRequest(context.dpop, agent.dpopBoundAccessTokens);
    // RFC 8707: the token is for the named resource (its `aud`), if within the policy and the agent's allowed_resources.
    const resource = form.get('resource');
    if (resource === undefined) {
      this.resourcePolicy.assertNamed([]);
      return this.tokens.issue({ agent, principal: null, scopes, grantType: this.grantType, jkt });
    }
    this.resourcePolicy.assertAllowed(resource, agent);
    // A registered protected resource's tokens carry only scopes it offers (docs/oauth2.md "Consent per MCP server"); an in-memory lookup.
    const registered = await this.catalog.byUri(resource, this.clock.now().getTime());
    if (
      registered !== undefined &&
      !scopes.every((scope) => registered.scopes.some((offered) => offered.scope === scope))
    ) {
      throw new OAuthError('invalid_scope', 'a requested scope is not offered by the resource');
    }
    return this.tokens.issue({ agent, principal: null, scopes, grantType: this.grantType, resources: [resource], jkt });
  }
}
