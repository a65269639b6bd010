import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { assertNever, OAuthError } from '@broker/domain';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { DpopProofs } from '../dpop/dpop-proofs';
import { AccessTokenIssuer, type TokenResponse } from '../token/access-token-issuer';
import type { GrantStrategy, TokenRequestContext } from '../token/grant-strategy';
import { required, type TokenForm } from '../token/token-form';
import { CibaClients } from './ciba-clients';
import { CIBA_REQUESTS, type CibaPollOutcome, type CibaRequestsPort } from './ciba-requests-port';

/** OpenID CIBA Core 1.0 §10.1: the grant type of the poll. */
export const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';

/** An `auth_req_id` is 43 characters (32 random bytes, base64url): anything much longer is nobody's. */
const MAX_AUTH_REQ_ID_CHARS = 128;

/**
 * `grant_type=urn:openid:params:grant-type:ciba` (OpenID CIBA Core 1.0 §10.1, poll mode;
 * docs/ciba.md "The endpoint"): the requester of an `auth_req_id` (the agent with its secret, or
 * the gateway with its assertion naming the same `client_id`) polls until the person decides.
 * The DPoP proof is checked before the poll, so a refused proof never spends the approval. On
 * approval: an access token of the person for the agent, `aud` the MCP server, carrying exactly
 * the approved `authorization_details` (RFC 9396 §7), `ciba.token_ttl` long, without refresh or
 * ID token; DPoP-bound when a proof came (RFC 9449 §5).
 */
@Injectable()
export class CibaGrant implements GrantStrategy {
  readonly grantType = CIBA_GRANT;
  /** Set when CIBA is enabled and the approval engine is bound (the end-user server). */
  readonly enabled: boolean;
  private readonly ttlSeconds: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly clients: CibaClients,
    private readonly tokens: AccessTokenIssuer,
    private readonly dpop: DpopProofs,
    @Optional() @Inject(CIBA_REQUESTS) private readonly requests?: CibaRequestsPort,
  ) {
    const ciba = config.oauth2_authorization_server.ciba;
    this.enabled = ciba.enabled && config.oauth2_authorization_server.mode !== 'proxy' && requests !== undefined;
    this.ttlSeconds = Math.floor(ciba.token_ttl / 1000);
  }

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenResponse> {
    const { agent, requester } = await this.clients.authenticate(form, context.authorization);
    const authReqId = required(form, 'auth_req_id');
    // RFC 9449 §5: a valid proof binds the token to its key; an agent that requires DPoP must send one.
    const jkt = await this.dpop.forTokenRequest(context.dpop, agent.dpopBoundAccessTokens);
    if (authReqId.length > MAX_AUTH_REQ_ID_CHARS || this.requests === undefined) throw unusableAuthReqId();
    const outcome = await this.requests.poll(authReqId, agent.id, requester);
    const approved = answerOf(outcome);
    const detail = JSON.parse(approved.authorizationDetailsJson) as { locations: [string] };
    return this.tokens.issue({
      agent,
      principal: approved.principal,
      scopes: approved.scopes,
      grantType: this.grantType,
      resources: [detail.locations[0]],
      authorizationDetails: approved.authorizationDetailsJson,
      ttlSeconds: this.ttlSeconds,
      jkt,
    });
  }
}

function unusableAuthReqId(): OAuthError {
  return new OAuthError('invalid_grant', "the auth_req_id is unknown, not this client's, or was already used");
}

/** CIBA §11: each poll outcome but approval is its error. */
function answerOf(outcome: CibaPollOutcome): Extract<CibaPollOutcome, { kind: 'approved' }> {
  switch (outcome.kind) {
    case 'approved':
      return outcome;
    case 'pending':
      return throwing(new OAuthError('authorization_pending', 'the person has not decided yet'));
    case 'slow_down':
      return throwing(
        new OAuthError('slow_down', `polled too soon: wait at least ${outcome.interval} seconds between polls`),
      );
    case 'denied':
      // CIBA §11: a token error response (400), unlike the token exchange's 403 refusal of a gateway.
      return throwing(
        new OAuthError(
          'access_denied',
          'the person denied the request',
          undefined,
          undefined,
          undefined,
          undefined,
          400,
        ),
      );
    case 'expired':
      return throwing(new OAuthError('expired_token', 'the auth_req_id has expired; send a new request'));
    case 'invalid':
      return throwing(unusableAuthReqId());
    default:
      return assertNever(outcome, 'CIBA poll outcome');
  }
}

function throwing(error: OAuthError): never {
  throw error;
}
