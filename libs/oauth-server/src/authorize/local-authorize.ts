import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, OAuthError, Random, redirectHostOf, scopesAllowedFor, type Principal } from '@broker/domain';
import {
  AgentRepository,
  AuthorizationCodeRepository,
  GrantClientRepository,
  GrantRepository,
} from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';
import { AuthorizationSessionTokens, type CimdSnapshot } from '../authorization-session/authorization-session-tokens';
import { CimdClients } from '../cimd/cimd-clients';
import { JKT } from '../dpop/jwk-thumbprint';
import { codeDigest } from '../token/authorization-code.grant';
import { ResourceConsent } from '../resource/resource-consent';
import { ResourceIndicators } from '../resource/resource-indicators';
import { AccessTokenIssuer } from '../token/access-token-issuer';
import { parseScope } from '../token/scopes';
import {
  assertClientIdShape,
  assertPkceS256Challenge,
  assertRedirectUriRegistered,
  assertResponseTypeCode,
  clientRedirect,
  single,
} from './authorize-rules';
import type { AuthorizationRequest, AuthorizeStrategy } from './authorize-strategy';

/** Authorization codes live 60 seconds. */
export const CODE_TTL_MS = 60_000;

/**
 * Local authorization (docs/oauth2.md): JSON errors in the spec's order,
 * then `invalid_scope` by redirect; with the user's consent (an active grant for the agent;
 * for a named resource, `ResourceConsent`: a registered one delegated by that grant with the
 * scopes asked; for a Client ID Metadata Document client also the user's consent, under that
 * grant, to its document URL and redirect host, docs/security.md) a
 * single-use code (256 random bits, stored hashed, 60 s, bound to client, redirect_uri,
 * challenge, principal, scope and the RFC 8707 resources, a refused one being
 * `invalid_target` by redirect); without one, the consent page with an authorization
 * session token whose `original_url` resumes this request. Every redirect to the client names
 * the issuer (`iss`, RFC 9207), an error's as much as a code's. `prompt` is not read
 * (docs/oauth2.md).
 */
@Injectable()
export class LocalAuthorize implements AuthorizeStrategy {
  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly agents: AgentRepository,
    private readonly grants: GrantRepository,
    private readonly grantClients: GrantClientRepository,
    private readonly codes: AuthorizationCodeRepository,
    private readonly sessions: AuthorizationSessionTokens,
    private readonly tokens: AccessTokenIssuer,
    private readonly cimd: CimdClients,
    private readonly resources: ResourceIndicators,
    private readonly resourceConsent: ResourceConsent,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {}

  async authorize(principal: Principal, request: AuthorizationRequest): Promise<string> {
    const { query } = request;
    const rawClientId = single(query, 'client_id');
    let agent;
    let redirectUri: string;
    let cimd: ((scopes: readonly string[]) => CimdSnapshot) | undefined;
    let documentUrl: string | undefined;
    if (this.cimd.accepts(rawClientId)) {
      // A client metadata document: its redirect_uris, not the agent's, are registered.
      const url = rawClientId as string;
      documentUrl = url;
      const client = await this.cimd.forAuthorization(url, single(query, 'redirect_uri'));
      ({ agent, redirectUri } = client);
      cimd = client.snapshot;
    } else {
      agent = await this.agents.findById(assertClientIdShape(rawClientId));
      if (agent === undefined) throw new OAuthError('invalid_client', 'client_id is not a registered client');
      redirectUri = assertRedirectUriRegistered(agent, single(query, 'redirect_uri'));
    }
    // docs/admin-api.md "Suspending an agent": answered to the person (JSON 403), never sent to the client's redirect.
    if (agent.suspension !== null) throw new OAuthError('access_denied', 'the agent is suspended by an administrator');
    assertResponseTypeCode(single(query, 'response_type'));
    const challenge = assertPkceS256Challenge(single(query, 'code_challenge'), single(query, 'code_challenge_method'));
    const state = single(query, 'state');
    // RFC 9449 §10: the code is bound to this DPoP key thumbprint (checked at the token endpoint).
    const dpopJkt = single(query, 'dpop_jkt');
    if (query.dpop_jkt !== undefined && (dpopJkt === undefined || !JKT.test(dpopJkt))) {
      return clientRedirect(redirectUri, this.tokens.issuer, {
        error: 'invalid_request',
        error_description: 'dpop_jkt must be the base64url SHA-256 thumbprint of a JWK (RFC 9449 §10)',
        state,
      });
    }
    const scopes = parseScope(single(query, 'scope'));
    if (!scopesAllowedFor(agent, scopes)) {
      return clientRedirect(redirectUri, this.tokens.issuer, {
        error: 'invalid_scope',
        error_description: 'a requested scope is not allowed for this client',
        state,
      });
    }
    const now = this.clock.now();
    let resources: string[];
    let granted: { scopes: readonly string[]; consented: boolean };
    try {
      resources = this.resources.fromQuery(query.resource, agent);
      // Consent per resource (docs/oauth2.md "Consent per MCP server"); without a resource, the agent's grant.
      granted =
        resources.length > 0
          ? await this.resourceConsent.decide(principal.id, agent, resources, scopes, now)
          : { scopes, consented: await this.grants.hasActive(principal.id, agent.id, now) };
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      return clientRedirect(redirectUri, this.tokens.issuer, {
        error: error.code,
        error_description: error.description,
        state,
      });
    }
    // A document client needs the person's consent to that document URL and redirect host too.
    const consented =
      granted.consented &&
      (documentUrl === undefined ||
        (await this.grantClients.consented(principal.id, agent.id, documentUrl, redirectHostOf(redirectUri), now)));
    if (!consented) {
      const token = await this.sessions.issue({
        agentId: agent.id,
        principal: principal.id,
        originalUrl: request.originalUrl,
        cimd: cimd ? cimd(scopes) : null,
      });
      return `${this.config.server.enduser.consent_ui_url}/agents/${agent.id}?session_token=${encodeURIComponent(token)}`;
    }
    const code = this.random.token(32);
    await this.codes.store(
      codeDigest(code),
      {
        agentId: agent.id,
        principal: principal.id,
        redirectUri,
        codeChallenge: challenge,
        scopes: [...granted.scopes],
        resources,
        clientIdUrl: documentUrl ?? null,
        dpopJkt: dpopJkt ?? null,
        expiresAt: new Date(now.getTime() + CODE_TTL_MS),
      },
      now,
    );
    return clientRedirect(redirectUri, this.tokens.issuer, { code, state });
  }

  /** True when this strategy (not a proxy) must serve the client_id: a metadata document URL. */
  servesLocally(clientId: string | undefined): boolean {
    return this.cimd.accepts(clientId);
  }
}
