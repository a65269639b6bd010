import { OAuthError } from '@broker/domain';
import type { AuthorizationRequest, AuthorizeStrategy } from '../authorize/authorize-strategy';
import type { LocalAuthorize } from '../authorize/local-authorize';
import type { JwksSource } from '../metadata/jwks-source';
import type { JsonWebKeySet } from '../signing-keys/signing-key.service';
import type { AuthorizationCodeGrant } from '../token/authorization-code.grant';
import type { GrantStrategy, TokenOutcome, TokenRequestContext } from '../token/grant-strategy';
import type { TokenForm } from '../token/token-form';
import { presentedClient } from '../token/client-authentication';
import type { ProxyAuthorize } from './proxy-authorize';
import type { ProxyTokenForwarder } from './proxy-token-forwarder';
import type { Principal } from '@broker/domain';

/**
 * Hybrid mode composes local and proxy, dispatching per agent: an
 * agent with an upstream `client_id` goes the proxy way, any other agent the local way.
 */
export class HybridAuthorize implements AuthorizeStrategy {
  constructor(
    private readonly local: LocalAuthorize,
    private readonly proxy: ProxyAuthorize,
  ) {}

  async authorize(principal: Principal, request: AuthorizationRequest): Promise<string> {
    // Metadata-document clients are always served locally (CIMD is a local capability).
    const clientId = request.query.client_id;
    if (this.local.servesLocally(typeof clientId === 'string' ? clientId : undefined))
      return this.local.authorize(principal, request);
    const agent = await this.proxy.validate(request);
    return agent.clientId === null
      ? this.local.authorize(principal, request)
      : this.proxy.redirectUpstream(principal, agent, request);
  }
}

export class HybridAuthorizationCodeGrant implements GrantStrategy {
  readonly grantType = 'authorization_code';

  constructor(
    private readonly local: AuthorizationCodeGrant,
    private readonly proxy: ProxyTokenForwarder,
    /** Metadata-document clients are always local (as in `HybridAuthorize`). */
    private readonly servesLocally: (clientId: string | undefined) => boolean,
  ) {}

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenOutcome> {
    if (this.servesLocally(presentedClient(context.authorization, form).clientId))
      return this.local.handle(form, context);
    const agent = await this.proxy.agentOf(form, context);
    return agent.clientId === null ? this.local.handle(form, context) : this.proxy.forward(agent, form, context);
  }
}

/** The union of the local and upstream key sets; a kid in both is a configuration fault (500). */
export class HybridJwks implements JwksSource {
  /** The last union, reused while both halves are the same objects (so its bytes are prepared once). */
  private merged: { local: JsonWebKeySet; upstream: JsonWebKeySet; union: JsonWebKeySet } | undefined;

  constructor(
    private readonly local: JwksSource,
    private readonly upstream: JwksSource,
  ) {}

  async keySet(): Promise<JsonWebKeySet> {
    const [local, upstream] = await Promise.all([this.local.keySet(), this.upstream.keySet()]);
    if (this.merged?.local === local && this.merged.upstream === upstream) return this.merged.union;
    const kids = new Set(local.keys.map((key) => key.kid));
    if (upstream.keys.some((key) => key.kid !== undefined && kids.has(key.kid)))
      throw new OAuthError('server_error', 'a key id is published by both the broker and the upstream');
    this.merged = { local, upstream, union: { keys: [...local.keys, ...upstream.keys] } };
    return this.merged.union;
  }
}
