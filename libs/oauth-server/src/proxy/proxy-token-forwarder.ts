import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { isCanonicalUuid, OAuthError, type Agent } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { OutboundHttp, OutboundHttpError } from '@broker/outbound';
import { Inject, Injectable } from '@nestjs/common';
import { presentedClient } from '../token/client-authentication';
import { AGENT_SUSPENDED } from '../token/client-authenticator';
import type { GrantStrategy, TokenOutcome, TokenRequestContext } from '../token/grant-strategy';
import type { TokenForm } from '../token/token-form';

/** Upstream response headers the broker relays; nothing else. */
const RELAYED = ['content-type', 'cache-control', 'pragma', 'www-authenticate'];
/** The upstream's answer is read into memory to be relayed, so it is capped (as a third party's token answer). */
const UPSTREAM_MAX_BYTES = 1024 * 1024;

/** The upstream answered nothing usable: `temporarily_unavailable`, saying whether it answered at all. */
function upstreamFailure(error: unknown): OAuthError {
  const brokeOff =
    error instanceof OutboundHttpError && (error.reason === 'too_large' || error.reason === 'interrupted');
  return new OAuthError(
    'temporarily_unavailable',
    brokeOff ? 'the upstream answer was too large or interrupted' : 'the upstream authorization server did not answer',
  );
}

/**
 * `authorization_code` in proxy mode (and for proxied agents in hybrid mode): the form is
 * forwarded upstream with `client_id` replaced by the agent's upstream client id and the
 * client secret passed through (taken from Basic into the form, since the Authorization
 * header itself is never forwarded), with only the form Content-Type header: never
 * Authorization, cookies or proxy identity headers. Only Content-Type, Cache-Control,
 * Pragma and WWW-Authenticate come back.
 */
@Injectable()
export class ProxyTokenForwarder implements GrantStrategy {
  readonly grantType = 'authorization_code';
  private readonly endpoint: string;
  private readonly upstream: OutboundHttp;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly agents: AgentRepository,
  ) {
    this.endpoint = config.oauth2_authorization_server.proxy.upstream_token_endpoint as string;
    const timeoutMs = config.oauth2_authorization_server.proxy.upstream_timeout;
    // Made once, so every forwarded request (the token endpoint's hot path) reuses its connection pool.
    // redirects 'return': the upstream's answer is relayed whatever its status, a 3xx too (without
    // its Location, which is not relayed), and never followed.
    this.upstream = new OutboundHttp({
      connectTimeoutMs: timeoutMs,
      totalTimeoutMs: timeoutMs,
      maxResponseBytes: UPSTREAM_MAX_BYTES,
      redirects: 'return',
    });
  }

  /** The proxied agent named by the request, or `invalid_client`. */
  async agentOf(form: TokenForm, context: TokenRequestContext): Promise<Agent> {
    const clientId = presentedClient(context.authorization, form).clientId?.toLowerCase();
    const agent =
      clientId !== undefined && isCanonicalUuid(clientId) ? await this.agents.findById(clientId) : undefined;
    if (agent === undefined) throw new OAuthError('invalid_client', 'unknown client');
    return agent;
  }

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenOutcome> {
    return this.forward(await this.agentOf(form, context), form, context);
  }

  async forward(agent: Agent, form: TokenForm, context: TokenRequestContext): Promise<TokenOutcome> {
    if (agent.clientId === null) throw new OAuthError('invalid_client', 'this client has no upstream registration');
    // Nothing is forwarded for a suspended agent: the upstream cannot know (docs/admin-api.md "Suspending an agent").
    if (agent.suspension !== null) throw new OAuthError('invalid_client', AGENT_SUSPENDED);
    const presented = presentedClient(context.authorization, form);
    const upstreamForm = new URLSearchParams(
      [...form].filter(([name]) => name !== 'client_id' && name !== 'client_secret'),
    );
    upstreamForm.set('client_id', agent.clientId);
    if (presented.clientSecret !== undefined) upstreamForm.set('client_secret', presented.clientSecret);
    let response;
    try {
      response = await this.upstream.postForm(this.endpoint, upstreamForm);
    } catch (error) {
      throw upstreamFailure(error);
    }
    const headers: Record<string, string> = {};
    for (const name of RELAYED) {
      const value = response.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    return { kind: 'relayed', status: response.status, headers, body: response.body };
  }
}
