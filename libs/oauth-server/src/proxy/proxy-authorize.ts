import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, OAuthError, scopesAllowedFor, type Agent, type Principal } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { JweCodec } from '@broker/vault';
import { Inject, Injectable } from '@nestjs/common';
import {
  assertClientIdShape,
  assertPkceS256Challenge,
  assertRedirectUriRegistered,
  assertResponseTypeCode,
  clientRedirect,
  single,
} from '../authorize/authorize-rules';
import type { AuthorizationRequest, AuthorizeStrategy } from '../authorize/authorize-strategy';
import { AccessTokenIssuer } from '../token/access-token-issuer';
import { parseScope } from '../token/scopes';

/** The proxy state token lives as long as an upstream login may take. */
const STATE_TTL_SECONDS = 600;

/**
 * Proxy authorization (proxy): the same JSON checks as
 * local mode, then a redirect to the upstream authorization endpoint with the agent's
 * upstream client_id, the redirect_uri, the PKCE parameters and any `resource` (RFC 8707,
 * forwarded untouched); the agent id (and the
 * client's own state) travel in a JWE state token. An agent without an upstream client_id
 * gets `server_error` at its redirect_uri. The broker's own error redirects name the broker
 * as `iss` (RFC 9207), the issuer its metadata publishes.
 */
@Injectable()
export class ProxyAuthorize implements AuthorizeStrategy {
  private readonly state: JweCodec;
  private readonly upstream: string;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly agents: AgentRepository,
    private readonly tokens: AccessTokenIssuer,
    clock: Clock,
  ) {
    this.state = new JweCodec(config.third_party_oauth2.jwe_keys, 'proxy authorization state', clock);
    this.upstream = config.oauth2_authorization_server.proxy.upstream_authorize_endpoint as string;
  }

  async authorize(principal: Principal, request: AuthorizationRequest): Promise<string> {
    const agent = await this.validate(request);
    return this.redirectUpstream(principal, agent, request);
  }

  /** The JSON-error checks shared with local mode, in the same order. */
  async validate(request: AuthorizationRequest): Promise<Agent> {
    const agent = await this.agents.findById(assertClientIdShape(single(request.query, 'client_id')));
    if (agent === undefined) throw new OAuthError('invalid_client', 'client_id is not a registered client');
    assertRedirectUriRegistered(agent, single(request.query, 'redirect_uri'));
    // docs/admin-api.md "Suspending an agent": never sent upstream.
    if (agent.suspension !== null) throw new OAuthError('access_denied', 'the agent is suspended by an administrator');
    assertResponseTypeCode(single(request.query, 'response_type'));
    assertPkceS256Challenge(single(request.query, 'code_challenge'), single(request.query, 'code_challenge_method'));
    return agent;
  }

  async redirectUpstream(principal: Principal, agent: Agent, request: AuthorizationRequest): Promise<string> {
    const { query } = request;
    const redirectUri = single(query, 'redirect_uri') as string;
    const clientState = single(query, 'state');
    const scopes = parseScope(single(query, 'scope'));
    if (!scopesAllowedFor(agent, scopes)) {
      return clientRedirect(redirectUri, this.tokens.issuer, {
        error: 'invalid_scope',
        error_description: 'a requested scope is not allowed for this client',
        state: clientState,
      });
    }
    if (agent.clientId === null)
      return clientRedirect(redirectUri, this.tokens.issuer, {
        error: 'server_error',
        error_description: 'this client has no upstream registration',
        state: clientState,
      });
    const state = await this.state.seal(
      { agent_id: agent.id, sub: principal.id, state: clientState },
      STATE_TTL_SECONDS,
    );
    return withParams(
      new URL(this.upstream),
      {
        response_type: 'code',
        client_id: agent.clientId,
        redirect_uri: redirectUri,
        scope: scopes.length > 0 ? scopes.join(' ') : undefined,
        state,
        code_challenge: single(query, 'code_challenge'),
        code_challenge_method: 'S256',
      },
      upstreamResources(query.resource),
    );
  }
}

/**
 * RFC 8707 `resource` parameters, forwarded to the upstream untouched (the upstream binds the
 * audience of the tokens it issues; the broker's resource policy is a local-mode one).
 */
function upstreamResources(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  return values.filter((item): item is string => typeof item === 'string');
}

function withParams(url: URL, params: Record<string, string | undefined>, resources: readonly string[] = []): string {
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  for (const resource of resources) url.searchParams.append('resource', resource);
  return url.toString();
}
