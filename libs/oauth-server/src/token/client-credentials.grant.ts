import { Injectable } from '@nestjs/common';
import { AccessTokenIssuer, type TokenResponse } from './access-token-issuer';
import { ClientAuthenticator } from './client-authenticator';
import type { GrantStrategy, TokenRequestContext } from './grant-strategy';
import { assertScopesAllowed, parseScope } from './scopes';
import type { TokenForm } from './token-form';

/** `client_credentials` (RFC 6749 §4.4), local: the agent's broker-issued secret buys a token for itself. */
@Injectable()
export class ClientCredentialsGrant implements GrantStrategy {
  readonly grantType = 'client_credentials';

  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly tokens: AccessTokenIssuer,
  ) {}

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenResponse> {
    const { agent } = await this.clients.authenticate(context.authorization, form, { allowPublic: false });
    const scopes = parseScope(form.get('scope'));
    assertScopesAllowed(agent, scopes);
    return this.tokens.issue({ agent, principal: null, scopes, grantType: this.grantType });
  }
}
