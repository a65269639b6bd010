import { OAuthError, type Agent } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { presentedClient } from '../token/client-authentication';
import { ClientAuthenticator } from '../token/client-authenticator';
import type { TokenForm } from '../token/token-form';
import { GatewayCredentials, GatewayCredentialsRefused } from '../token-exchange/gateway-credentials';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * Whose tokens the revocation and introspection endpoints serve, bound once per mode
 * (`mode-strategies.ts`): local mode every agent; hybrid mode the agents without an upstream
 * client id (the others' tokens are the upstream's); proxy mode nobody (the broker issues no
 * tokens of its own there).
 */
export interface TokenLifecycleScope {
  readonly open: boolean;
  servesAgent(agent: Agent): boolean;
}

export const TOKEN_LIFECYCLE_SCOPE = Symbol('TOKEN_LIFECYCLE_SCOPE');

/** Who asks to revoke: an agent by its client id (broker-issued secret or public), or a metadata-document client by its URL. */
export type Revoker =
  { readonly kind: 'agent'; readonly agentId: string } | { readonly kind: 'document'; readonly url: string };

/** Who asks to introspect: a confidential agent, or the trusted gateway. */
export type Introspector = { readonly kind: 'agent'; readonly agentId: string } | { readonly kind: 'gateway' };

/**
 * Client authentication of `POST /oauth2/revoke` (RFC 7009 §2.1: as at the token endpoint)
 * and `POST /oauth2/introspect` (RFC 7662 §2.1: the caller must be authorized; here a
 * confidential agent or the gateway). Every failure is `invalid_client`.
 */
@Injectable()
export class LifecycleClients {
  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly gateway: GatewayCredentials,
    @Inject(TOKEN_LIFECYCLE_SCOPE) private readonly scope: TokenLifecycleScope,
  ) {}

  /**
   * A confidential agent with its secret (Basic or post), a public agent by `client_id`
   * alone, or a metadata-document client by its URL (public by construction).
   */
  async revoker(authorization: string | undefined, form: TokenForm): Promise<Revoker> {
    this.assertOpen();
    const presented = presentedClient(authorization, form);
    const url = this.clients.documentUrl(presented);
    if (url !== undefined) return { kind: 'document', url };
    // A suspended agent may still give its tokens up (docs/admin-api.md "Suspending an agent").
    const { agent } = await this.clients.authenticatePresented(presented, { allowPublic: true, allowSuspended: true });
    this.assertServed(agent);
    return { kind: 'agent', agentId: agent.id };
  }

  /** A confidential agent (Basic or post), or the gateway by its client assertion (RFC 7523) and the authorization expression. */
  async introspector(authorization: string | undefined, form: TokenForm): Promise<Introspector> {
    this.assertOpen();
    if (form.has('client_assertion') || form.has('client_assertion_type')) {
      if (form.has('client_secret') || (authorization !== undefined && /^basic /i.test(authorization)))
        throw new OAuthError('invalid_request', 'use one client authentication method, not two');
      await this.gatewayClaims(form);
      return { kind: 'gateway' };
    }
    const { agent } = await this.clients.authenticatePresented(presentedClient(authorization, form), {
      allowPublic: false,
    });
    this.assertServed(agent);
    return { kind: 'agent', agentId: agent.id };
  }

  private async gatewayClaims(form: TokenForm): Promise<JWTPayload> {
    const assertion = form.get('client_assertion');
    if (assertion === undefined || assertion === '' || form.get('client_assertion_type') !== JWT_BEARER)
      throw new OAuthError('invalid_client', 'client authentication failed');
    try {
      const claims = await this.gateway.verifyAssertion(assertion);
      this.gateway.assertAuthorized(claims);
      return claims;
    } catch (error) {
      if (error instanceof GatewayCredentialsRefused)
        throw new OAuthError('invalid_client', 'client authentication failed');
      throw error;
    }
  }

  private assertOpen(): void {
    if (!this.scope.open)
      throw new OAuthError('invalid_client', 'this server issues no tokens of its own in proxy mode');
  }

  private assertServed(agent: Agent): void {
    if (!this.scope.servesAgent(agent))
      throw new OAuthError('invalid_client', "this client's tokens are issued by the upstream authorization server");
  }
}
