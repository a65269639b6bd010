import { isCanonicalUuid, OAuthError, type Agent } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { AGENT_SUSPENDED, ClientAuthenticator } from '../token/client-authenticator';
import { required, type TokenForm } from '../token/token-form';
import { GatewayCredentials, GatewayCredentialsRefused } from '../token-exchange/gateway-credentials';
import { JWT_BEARER } from '../token-exchange/token-types';
import { TOKEN_LIFECYCLE_SCOPE, type TokenLifecycleScope } from '../token-lifecycle/lifecycle-clients';
import type { CibaRequester } from './ciba-requests-port';

/** An authenticated client of the backchannel authentication endpoint or of the CIBA grant. */
export interface CibaClient {
  readonly agent: Agent;
  readonly requester: CibaRequester;
}

/** The longest gateway `sub` kept: it is stored as `gateway:<sub>` in 200 characters. */
const MAX_GATEWAY_ID_CHARS = 192;

/**
 * Client authentication of CIBA requests and polls (docs/ciba.md "The endpoint"), as at the
 * token endpoint: an agent with broker-issued credentials by its secret (RFC 6749 §2.3.1; a
 * public agent is `invalid_client`, CIBA clients are confidential, OpenID CIBA Core 1.0 §4), or
 * the gateway by its client assertion (RFC 7523 §2.2, verified and authorized as for the token
 * exchange) with `client_id` naming the agent it asks for. The assertion is verified before
 * `client_id` is looked up, so nobody without credentials learns which agents exist. In hybrid
 * mode the agent must be one the broker issues tokens for itself (§13 `unauthorized_client`).
 */
@Injectable()
export class CibaClients {
  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly gateway: GatewayCredentials,
    private readonly agents: AgentRepository,
    @Inject(TOKEN_LIFECYCLE_SCOPE) private readonly scope: TokenLifecycleScope,
  ) {}

  async authenticate(form: TokenForm, authorization: string | undefined): Promise<CibaClient> {
    const client =
      form.has('client_assertion') || form.has('client_assertion_type')
        ? await this.gatewayClient(form, authorization)
        : {
            agent: (await this.clients.authenticate(authorization, form, { allowPublic: false })).agent,
            requester: 'agent' as const,
          };
    if (!this.scope.servesAgent(client.agent))
      throw new OAuthError('unauthorized_client', 'this client gets its tokens from the upstream authorization server');
    return client;
  }

  private async gatewayClient(form: TokenForm, authorization: string | undefined): Promise<CibaClient> {
    if (form.has('client_secret') || (authorization !== undefined && /^basic /i.test(authorization)))
      throw new OAuthError('invalid_request', 'use one client authentication method, not two');
    if (form.get('client_assertion_type') !== JWT_BEARER)
      throw new OAuthError('invalid_request', `client_assertion_type must be ${JWT_BEARER}`);
    const assertion = required(form, 'client_assertion');
    const gateway = this.gatewayOf(await this.verified(assertion));
    const clientId = form.get('client_id')?.toLowerCase();
    if (clientId === undefined || clientId === '')
      throw new OAuthError('invalid_request', 'client_id is required with a client assertion: the agent asked for');
    const agent = isCanonicalUuid(clientId) ? (await this.agents.findClient(clientId))?.agent : undefined;
    if (agent === undefined) throw new OAuthError('invalid_client', 'unknown client');
    if (agent.suspension !== null) throw new OAuthError('invalid_client', AGENT_SUSPENDED);
    return { agent, requester: { gateway } };
  }

  /** RFC 7523 §3: the assertion against the trust anchor, then the exchange's authorization expression. */
  private async verified(assertion: string): Promise<JWTPayload> {
    try {
      const claims = await this.gateway.verifyAssertion(assertion);
      this.gateway.assertAuthorized(claims);
      return claims;
    } catch (error) {
      if (!(error instanceof GatewayCredentialsRefused)) throw error;
      if (error.refusal === 'not_authorized') throw new OAuthError('access_denied', 'the gateway is not authorized');
      throw new OAuthError('invalid_client', error.message);
    }
  }

  private gatewayOf(claims: JWTPayload): string {
    const sub = claims.sub;
    if (typeof sub !== 'string' || sub.trim() === '' || sub.length > MAX_GATEWAY_ID_CHARS)
      throw new OAuthError('invalid_client', 'the client assertion names no gateway (sub)');
    return sub;
  }
}
