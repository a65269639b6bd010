import { AuditLog } from '@broker/audit';
import { BROKER_CONFIG, ConfigError, type BrokerConfig } from '@broker/config';
import { CelCompileError, Clock, compileCel, isCanonicalUuid, isUuidShaped, normaliseResourceUri, OAuthError, type CompiledExpression, type GrantDelegation } from '@broker/domain';
import { ExchangeLookup, type ExchangeContext } from '@broker/persistence';
import { TokenVault, TokenVaultError, type UsableToken } from '@broker/vault';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import type { TokenResponse } from '../token/access-token-issuer';
import type { GrantStrategy, TokenRequestContext } from '../token/grant-strategy';
import { required, type TokenForm } from '../token/token-form';
import { JwtRejected, TrustAnchor } from './trust-anchor';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

function compile(key: string, expression: string, variables: string[]): CompiledExpression {
  try {
    return compileCel(expression, variables);
  } catch (error) {
    if (error instanceof CelCompileError) throw new ConfigError(key, `is not a valid CEL expression: ${error.message}`);
    throw error;
  }
}

/**
 * RFC 8693 token exchange for gateways (SPEC.md "Third-party token exchange"): the hot
 * path. Each step of the spec's processing order is one function failing with exactly the
 * error of the table. Nothing is loaded per request that could be prepared once: trust
 * anchor keys and verified tokens are cached, CEL is compiled at boot, and the resource,
 * grant and session are read in one indexed query.
 */
@Injectable()
export class TokenExchangeGrant implements GrantStrategy {
  readonly grantType = TOKEN_EXCHANGE;
  private readonly principalOf: CompiledExpression;
  private readonly agentIdOf: CompiledExpression;
  private readonly authorizes: CompiledExpression;
  private readonly publicUrl: string;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly anchor: TrustAnchor,
    private readonly lookup: ExchangeLookup,
    private readonly vault: TokenVault,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {
    const extraction = config.token_exchange.claim_extraction;
    this.principalOf = compile('token_exchange.claim_extraction.principal_expression', extraction.principal_expression, ['subject_token']);
    this.agentIdOf = compile('token_exchange.claim_extraction.agent_id_expression', extraction.agent_id_expression, ['subject_token']);
    this.authorizes = compile('token_exchange.authorization.cel.expression', config.token_exchange.authorization.cel.expression, ['client_assertion']);
    this.publicUrl = config.server.enduser.public_url;
  }

  async handle(form: TokenForm, _context: TokenRequestContext): Promise<TokenResponse> {
    const facts: Record<string, string | null> = { principal: null, agent_id: null, service_id: null, resource: form.get('resource') ?? null };
    try {
      const assertion = await this.authenticateGateway(form);
      const subject = await this.verifySubjectToken(form);
      const { principal, agentId } = this.extractIdentities(subject);
      facts.principal = principal;
      facts.agent_id = agentId;
      this.assertAuthorized(assertion);
      const context = await this.resolveService(form, principal, agentId);
      facts.service_id = context.serviceId;
      const delegations = this.requireActiveGrant(context);
      const token = await this.usableToken(context, principal);
      this.audit.record('token_exchange', { ...facts, outcome: 'issued', error_code: null });
      return this.response(token, delegations, form.get('scope'));
    } catch (error) {
      this.audit.record('token_exchange', { ...facts, outcome: 'refused', error_code: error instanceof OAuthError ? error.code : 'server_error' });
      throw error;
    }
  }

  /** Step 1: the gateway's client assertion (RFC 7523) against the trust anchor → else 401 invalid_client. */
  private async authenticateGateway(form: TokenForm): Promise<JWTPayload> {
    const assertion = required(form, 'client_assertion');
    if (form.get('client_assertion_type') !== JWT_BEARER) throw new OAuthError('invalid_request', `client_assertion_type must be ${JWT_BEARER}`);
    try {
      return await this.anchor.verify(assertion, 'client_assertion');
    } catch (error) {
      if (error instanceof JwtRejected) throw new OAuthError('invalid_client', 'the client assertion is not valid');
      throw error;
    }
  }

  /** Step 2: the user's subject token, verified by the same anchor (its audience is the gateway's, not ours). */
  private async verifySubjectToken(form: TokenForm): Promise<JWTPayload> {
    const token = required(form, 'subject_token');
    if (form.get('subject_token_type') !== ACCESS_TOKEN_TYPE) throw new OAuthError('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    try {
      return await this.anchor.verify(token, 'subject_token');
    } catch (error) {
      if (error instanceof JwtRejected) throw new OAuthError('invalid_request', 'the subject token is not valid');
      throw error;
    }
  }

  /** Step 2 (cont.): principal and agent id by the configured expressions → else invalid_request. */
  private extractIdentities(subject: JWTPayload): { principal: string; agentId: string } {
    let principal: unknown;
    let agentId: unknown;
    try {
      principal = this.principalOf({ subject_token: subject });
      agentId = this.agentIdOf({ subject_token: subject });
    } catch {
      throw new OAuthError('invalid_request', 'the subject token lacks the principal or agent claim');
    }
    if (typeof principal !== 'string' || principal.trim() === '' || principal.length > 200) throw new OAuthError('invalid_request', 'the subject token has no usable principal claim');
    if (typeof agentId !== 'string' || !isUuidShaped(agentId)) throw new OAuthError('invalid_request', 'the subject token has no usable agent claim');
    const agent = agentId.toLowerCase();
    return { principal: principal.trim(), agentId: isCanonicalUuid(agent) ? agent : agentId };
  }

  /** Step 3: the authorization expression over the client assertion's claims → else 403 access_denied. */
  private assertAuthorized(assertion: JWTPayload): void {
    let allowed: unknown;
    try {
      allowed = this.authorizes({ client_assertion: assertion });
    } catch {
      allowed = false;
    }
    if (allowed !== true) throw new OAuthError('access_denied', 'the gateway is not authorized to exchange tokens');
  }

  /**
   * Step 4: the service owning `resource` (normal form, exact match) → invalid_request /
   * invalid_target. Its grant and session are read in the same round trip (steps 5-6).
   */
  private async resolveService(form: TokenForm, principal: string, agentId: string): Promise<ExchangeContext> {
    const resource = normaliseResourceUri(required(form, 'resource'));
    if (resource === undefined) throw new OAuthError('invalid_request', 'resource must be an absolute http(s) URI');
    const context = await this.lookup.contextFor(resource, principal, agentId, this.clock.now());
    // RFC 8693 §2.2.2: invalid_target when no service owns the resource.
    if (context === undefined) throw new OAuthError('invalid_target', 'no service is registered for this resource');
    return context;
  }

  /** Step 5: an active grant of the principal for the agent that delegates the service → else 403 access_denied. */
  private requireActiveGrant(context: ExchangeContext): GrantDelegation[] {
    if (context.delegations.length === 0) throw new OAuthError('access_denied', 'no active grant delegates this service to the agent');
    return context.delegations;
  }

  /** Step 6: the stored third-party token, refreshed when needed (single-flight). */
  private async usableToken(context: ExchangeContext, principal: string): Promise<UsableToken> {
    try {
      return await this.vault.usableTokenOf(context.session, principal, context.serviceId);
    } catch (error) {
      if (error instanceof TokenVaultError && error.code !== 'refresh_failed') {
        throw new OAuthError('invalid_grant', 'the user has no usable session with the service: reconnect it', `${this.publicUrl}/api/third-party/${context.serviceId}/oauth2/authorize`);
      }
      throw new OAuthError('server_error', 'the stored token could not be refreshed');
    }
  }

  /** Step 7: SPEC.md's response table. */
  private response(token: UsableToken, delegations: readonly GrantDelegation[], requestedScope: string | undefined): TokenResponse {
    const response: Record<string, unknown> = { access_token: token.accessToken, token_type: token.tokenType, issued_token_type: ACCESS_TOKEN_TYPE };
    if (token.expiresAt !== null) response.expires_in = Math.max(0, Math.floor((token.expiresAt.getTime() - this.clock.nowMs()) / 1000));
    const scope = token.scopes.join(' ');
    if (scope !== '' && scope !== (requestedScope ?? '')) response.scope = scope;
    const sets: Record<string, string[]> = {};
    for (const d of delegations) (sets[d.permissionSetId] ??= []).push(d.serviceId);
    response.granted_permission_sets = sets;
    return response as unknown as TokenResponse;
  }
}
