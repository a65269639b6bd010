import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { isCanonicalUuid, OAuthError, type Agent } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { readCapped } from '@broker/vault';
import { Inject, Injectable } from '@nestjs/common';
import { request } from 'undici';
import { presentedClient } from '../token/client-authentication';
import type { GrantStrategy, TokenOutcome, TokenRequestContext } from '../token/grant-strategy';
import type { TokenForm } from '../token/token-form';

/** Upstream response headers the broker relays (SPEC.md "authorization_code, proxy"); nothing else. */
const RELAYED = ['content-type', 'cache-control', 'pragma', 'www-authenticate'];
const MAX_BYTES = 1024 * 1024;

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
  private readonly timeoutMs: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly agents: AgentRepository,
  ) {
    this.endpoint = config.oauth2_authorization_server.proxy.upstream_token_endpoint as string;
    this.timeoutMs = config.oauth2_authorization_server.proxy.upstream_timeout;
  }

  /** The proxied agent named by the request, or `invalid_client`. */
  async agentOf(form: TokenForm, context: TokenRequestContext): Promise<Agent> {
    const clientId = presentedClient(context.authorization, form).clientId?.toLowerCase();
    const agent = clientId !== undefined && isCanonicalUuid(clientId) ? await this.agents.findById(clientId) : undefined;
    if (agent === undefined) throw new OAuthError('invalid_client', 'unknown client');
    return agent;
  }

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenOutcome> {
    return this.forward(await this.agentOf(form, context), form, context);
  }

  async forward(agent: Agent, form: TokenForm, context: TokenRequestContext): Promise<TokenOutcome> {
    if (agent.clientId === null) throw new OAuthError('invalid_client', 'this client has no upstream registration');
    const presented = presentedClient(context.authorization, form);
    const upstreamForm = new URLSearchParams([...form].filter(([name]) => name !== 'client_id' && name !== 'client_secret'));
    upstreamForm.set('client_id', agent.clientId);
    if (presented.clientSecret !== undefined) upstreamForm.set('client_secret', presented.clientSecret);
    let response;
    try {
      response = await request(this.endpoint, {
        method: 'POST',
        maxRedirections: 0,
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: upstreamForm.toString(),
      });
    } catch {
      throw new OAuthError('temporarily_unavailable', 'the upstream authorization server did not answer');
    }
    let body: Buffer;
    try {
      body = await readCapped(response.body, MAX_BYTES);
    } catch {
      throw new OAuthError('temporarily_unavailable', 'the upstream answer was too large or interrupted');
    }
    const headers: Record<string, string> = {};
    for (const name of RELAYED) {
      const value = response.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    return { kind: 'relayed', status: response.statusCode, headers, body };
  }
}
