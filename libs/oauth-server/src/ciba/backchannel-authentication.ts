import { AuditLog } from '@broker/audit';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { assertNever, Clock, OAuthError } from '@broker/domain';
import { GrantRepository, ProtectedResourceRepository } from '@broker/persistence';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { withBasicChallenge } from '../token/token-endpoint';
import { readTokenForm, repeatedParameter, type TokenForm } from '../token/token-form';
import {
  assertSupportedParameters,
  authorizationDetailsText,
  bindingMessage,
  loginHint,
  requestedExpiryMs,
  requestedScopes,
} from './backchannel-parameters';
import { CibaClients, type CibaClient } from './ciba-clients';
import { CIBA_REQUESTS, type CibaRequestsPort, type CibaRequester } from './ciba-requests-port';
import { LoginHints } from './login-hints';
import { canonicalDetailJson, parseToolCallDetails, type ToolCallDetail } from './tool-call-details';

/** OpenID CIBA Core 1.0 §7.3: the successful answer. */
export interface BackchannelAuthenticationResponse {
  readonly auth_req_id: string;
  readonly expires_in: number;
  readonly interval: number;
}

/** CIBA §13: the one answer for a hint naming nobody and for a person who does not allow the client. */
function unknownUser(): OAuthError {
  return new OAuthError('unknown_user_id', 'the hint names no person who allows this client');
}

/** Why the request was refused as `unknown_user_id`: in the audit record only, never in the answer or the ledger. */
type UnknownUserReason = 'hint_names_no_principal' | 'no_active_grant';

class UnknownUser extends Error {
  constructor(
    readonly reason: UnknownUserReason,
    readonly principal: string | null,
  ) {
    super(reason);
  }
}

/** What the audit record of one request says besides its outcome. */
interface RequestFacts {
  agentId: string | null;
  requester: string | null;
  principal: string | null;
  tool: string | null;
  resource: string | null;
}

function requesterName(requester: CibaRequester): string {
  return requester === 'agent' ? 'agent' : `gateway:${requester.gateway}`;
}

/**
 * `POST /oauth2/bc-authorize` (OpenID CIBA Core 1.0 §7, poll mode; docs/ciba.md "The endpoint"):
 * the agent (or the gateway for it) asks the person named by `login_hint` to allow one tool
 * call (`authorization_details`, RFC 9396). The checks run in this order, each failing with its
 * own error: the form, client authentication, unsupported parameters, `authorization_details`,
 * `scope`, `binding_message`, `requested_expiry`, the hint, then the approval engine's grant
 * check and rate limits, which stores the request as an approval. A hint naming nobody and a
 * person without an active grant for the agent get the same answer; the audit record says which.
 */
@Injectable()
export class BackchannelAuthentication {
  private readonly intervalMs: number;
  private readonly defaultExpiryMs: number;
  private readonly maxExpiryMs: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly clients: CibaClients,
    private readonly hints: LoginHints,
    private readonly catalog: ProtectedResourceRepository,
    private readonly grants: GrantRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    @Optional() @Inject(CIBA_REQUESTS) private readonly requests?: CibaRequestsPort,
  ) {
    const ciba = config.oauth2_authorization_server.ciba;
    this.intervalMs = ciba.interval;
    this.defaultExpiryMs = ciba.default_expiry;
    this.maxExpiryMs = ciba.max_expiry;
  }

  async handle(
    contentType: string | undefined,
    body: Buffer | undefined,
    authorization: string | undefined,
  ): Promise<BackchannelAuthenticationResponse> {
    const form = readForm(contentType, body);
    const facts: RequestFacts = { agentId: null, requester: null, principal: null, tool: null, resource: null };
    let authenticated = false;
    try {
      const client = await this.clients.authenticate(form, authorization);
      authenticated = true;
      facts.agentId = client.agent.id;
      facts.requester = requesterName(client.requester);
      const answer = await this.requestFor(client, form, facts);
      this.record(facts, 'created', null, null);
      return answer;
    } catch (thrown) {
      // RFC 6749 §5.2: a client that tried HTTP Basic and failed gets the Basic challenge with its 401.
      const error =
        thrown instanceof UnknownUser
          ? unknownUser()
          : authorization !== undefined && /^basic /i.test(authorization)
            ? withBasicChallenge(thrown)
            : thrown;
      if (thrown instanceof UnknownUser) facts.principal = thrown.principal;
      // Unauthenticated refusals are not recorded one by one: a flood of them would fill the log.
      if (authenticated)
        this.record(
          facts,
          'refused',
          error instanceof OAuthError ? error.code : 'server_error',
          thrown instanceof UnknownUser ? thrown.reason : null,
        );
      throw error;
    }
  }

  private async requestFor(
    client: CibaClient,
    form: TokenForm,
    facts: RequestFacts,
  ): Promise<BackchannelAuthenticationResponse> {
    assertSupportedParameters(form);
    const detail = await this.toolCall(form);
    facts.tool = detail.tool;
    facts.resource = detail.locations[0];
    const scopes = requestedScopes(form);
    const message = bindingMessage(form);
    const expiresInMs = requestedExpiryMs(form, this.defaultExpiryMs, this.maxExpiryMs);
    const principal = this.principal(form, client);
    facts.principal = principal;
    await this.assertScopesGranted(principal, client, detail, scopes);
    const requests = this.requests;
    // Bound by the end-user server whenever CIBA is enabled (the only server with this route).
    if (requests === undefined) throw new OAuthError('server_error', 'the approval engine is not available');
    const outcome = await requests.request({
      principal,
      agentId: client.agent.id,
      requester: client.requester,
      detail: {
        tool: detail.tool,
        arguments: { ...detail.arguments },
        risk: detail.risk,
        json: canonicalDetailJson(detail),
      },
      bindingMessage: message,
      scopes,
      expiresInMs,
      intervalMs: this.intervalMs,
    });
    switch (outcome.kind) {
      case 'created':
        return { auth_req_id: outcome.authReqId, expires_in: outcome.expiresIn, interval: outcome.interval };
      case 'no_grant':
        throw new UnknownUser('no_active_grant', principal);
      case 'rate_limited':
        throw new OAuthError(
          'temporarily_unavailable',
          outcome.limit === 'pending'
            ? 'too many requests wait for this person; try again later'
            : 'too many requests for this person in the last minute; try again later',
          undefined,
          undefined,
          { 'Retry-After': String(outcome.retryAfterSeconds) },
        );
      default:
        return assertNever(outcome, 'CIBA request outcome');
    }
  }

  /**
   * RFC 9396 §2: the one tool call, strictly validated, whose `locations[0]` is a registered MCP
   * server (protected resource; the catalog is read asynchronously, so after the parser).
   */
  private async toolCall(form: TokenForm): Promise<ToolCallDetail> {
    const detail = parseToolCallDetails(authorizationDetailsText(form), () => true);
    const registered = await this.catalog.byUri(detail.locations[0], this.clock.nowMs());
    if (registered === undefined)
      throw new OAuthError(
        'invalid_authorization_details',
        'locations[0] is not the resource URI of a registered MCP server',
      );
    return detail;
  }

  /** CIBA §7.1 `login_hint` → the person, by the configured expression; none is `unknown_user_id`. */
  private principal(form: TokenForm, client: CibaClient): string {
    const hint = loginHint(form);
    const principal = hint === undefined ? undefined : this.hints.principalOf(hint, client.agent);
    if (principal === undefined) throw new UnknownUser('hint_names_no_principal', null);
    return principal;
  }

  /**
   * Each requested scope must be one the person's active grant gives the agent for the MCP
   * server (docs/oauth2.md "Consent per MCP server"), else `invalid_scope`; a person without
   * an active grant for the agent is `unknown_user_id`, as the approval engine answers.
   */
  private async assertScopesGranted(
    principal: string,
    client: CibaClient,
    detail: ToolCallDetail,
    scopes: readonly string[],
  ): Promise<void> {
    if (scopes.length === 0) return;
    const now = this.clock.now();
    if (!(await this.grants.hasActive(principal, client.agent.id, now)))
      throw new UnknownUser('no_active_grant', principal);
    const resource = await this.catalog.byUri(detail.locations[0], now.getTime());
    const granted =
      resource === undefined
        ? undefined
        : await this.grants.resourceScopes(principal, client.agent.id, resource.id, now);
    // The description never names the refused scopes (docs/http-api.md).
    if (granted === undefined || !scopes.every((scope) => granted.has(scope)))
      throw new OAuthError(
        'invalid_scope',
        "a requested scope is not one the person's grant gives this client for the MCP server",
      );
  }

  /** One audit record per authenticated request (never a hint, a message or the arguments). */
  private record(
    facts: RequestFacts,
    outcome: 'created' | 'refused',
    oauthError: string | null,
    reason: string | null,
  ): void {
    this.audit.record('ciba_request', {
      principal: facts.principal,
      agent_id: facts.agentId,
      requester: facts.requester,
      tool: facts.tool,
      resource: facts.resource,
      outcome,
      oauth_error: oauthError,
      reason,
    });
  }
}

/** The form, as at the token endpoint (RFC 6749 §3.2: a repeated parameter is `invalid_request`). */
function readForm(contentType: string | undefined, body: Buffer | undefined): TokenForm {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new OAuthError('invalid_request', 'the request must be application/x-www-form-urlencoded');
  const { form, repeated } = readTokenForm(contentType, body);
  const first = repeated[0];
  if (first !== undefined) throw repeatedParameter(first);
  return form;
}
