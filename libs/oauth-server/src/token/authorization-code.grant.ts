import { createHash, timingSafeEqual } from 'node:crypto';
import { Clock, OAuthError } from '@broker/domain';
import { AuthorizationCodeRepository, type AuthorizationCodeRecord } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { narrowResources, ResourceIndicators } from '../resource/resource-indicators';
import { AccessTokenIssuer, type TokenResponse } from './access-token-issuer';
import { presentedClient } from './client-authentication';
import { ClientAuthenticator } from './client-authenticator';
import { DpopProofs } from '../dpop/dpop-proofs';
import { RefreshTokens, withRefreshToken } from './refresh-tokens';
import type { GrantStrategy, TokenRequestContext } from './grant-strategy';
import { required, type TokenForm } from './token-form';

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 7636 §4.1: 43-128 unreserved characters. */
function assertVerifierFormat(verifier: string): void {
  if (!VERIFIER.test(verifier))
    throw new OAuthError('invalid_grant', 'code_verifier must be 43-128 unreserved characters');
}

/** RFC 7636 §4.6: BASE64URL(SHA256(verifier)) equals the stored challenge. */
function assertPkceS256(verifier: string, challenge: string): void {
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  if (computed.length !== expected.length || !timingSafeEqual(computed, expected))
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code challenge');
}

/**
 * RFC 6749 §4.1.3: the code was issued to this client (the agent, and the same client
 * metadata document URL or none), for this redirect_uri, and is unexpired.
 */
function assertCodeBinding(
  code: AuthorizationCodeRecord,
  agentId: string,
  documentUrl: string | undefined,
  redirectUri: string,
  now: Date,
): void {
  if (code.expiresAt.getTime() <= now.getTime())
    throw new OAuthError('invalid_grant', 'the authorization code has expired');
  if (code.agentId !== agentId || (code.clientIdUrl ?? undefined) !== documentUrl)
    throw new OAuthError('invalid_grant', 'the authorization code was issued to another client');
  if (code.redirectUri !== redirectUri)
    throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request');
}

export function codeDigest(code: string): Buffer {
  return createHash('sha256').update(code, 'utf8').digest();
}

/**
 * `authorization_code` (RFC 6749 §4.1.3 with RFC 7636), local: single-use codes, PKCE S256;
 * a `resource` (RFC 8707) narrows the token to one of the code's resources. A code for
 * `offline_access` also buys a refresh token (`RefreshTokens`).
 */
@Injectable()
export class AuthorizationCodeGrant implements GrantStrategy {
  readonly grantType = 'authorization_code';

  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly codes: AuthorizationCodeRepository,
    private readonly tokens: AccessTokenIssuer,
    private readonly resourcePolicy: ResourceIndicators,
    private readonly refreshTokens: RefreshTokens,
    private readonly clock: Clock,
    private readonly dpop: DpopProofs,
  ) {}

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenResponse> {
    const presented = presentedClient(context.authorization, form);
    const documentUrl = this.clients.documentUrl(presented);
    const client =
      documentUrl === undefined
        ? await this.clients.authenticatePresented(presented, { allowPublic: true })
        : undefined;
    const code = required(form, 'code');
    const redirectUri = required(form, 'redirect_uri');
    const verifier = required(form, 'code_verifier');
    assertVerifierFormat(verifier);
    // Consumed whatever happens next: a failed redemption cannot be retried (RFC 6749 §4.1.2).
    const record = await this.codes.redeem(codeDigest(code));
    if (record === undefined)
      throw new OAuthError('invalid_grant', 'the authorization code is invalid or was already used');
    // A metadata-document client is resolved through the code's agent, never by scanning every agent.
    const agent = client?.agent ?? (await this.clients.documentClientAgent(record.agentId, documentUrl as string));
    assertCodeBinding(record, agent.id, documentUrl, redirectUri, this.clock.now());
    assertPkceS256(verifier, record.codeChallenge);
    const jkt = await this.boundKey(context, agent.dpopBoundAccessTokens, record.dpopJkt ?? null);
    // RFC 8707 §2.2: one of the authorized resources (still within the policy and the agent's
    // allowed_resources), or all of them (still within the agent's allowed_resources).
    const requested = form.get('resource');
    if (requested !== undefined) this.resourcePolicy.assertAllowed(requested, agent);
    const resources = narrowResources(record.resources ?? [], requested);
    if (requested === undefined) this.resourcePolicy.assertAgentAllows(resources, agent);
    // A code issued without resource (before resource_indicators.required was set) buys no token without aud.
    this.resourcePolicy.assertNamed(resources);
    if (!this.refreshTokens.wanted(record.scopes))
      return this.tokens.issue({
        agent,
        principal: record.principal,
        scopes: record.scopes,
        grantType: this.grantType,
        resources,
        clientIdUrl: documentUrl,
        jkt,
      });
    // `offline_access` (allowed for the agent when the code was issued): a refresh token family for the code's
    // scope and authorized resources (all of them, whatever `resource` narrowed this access token to).
    const family = await this.refreshTokens.start({
      agent,
      principal: record.principal,
      scopes: record.scopes,
      resources: record.resources ?? [],
      credentialSha256: client?.credentialSha256 ?? null,
      clientIdUrl: documentUrl ?? null,
      // RFC 9449 §5: a public client's refresh tokens are bound to the key its access token is bound to.
      dpopJkt: (client?.credentialSha256 ?? null) === null ? (jkt ?? null) : null,
    });
    const response = await this.tokens.issue({
      agent,
      principal: record.principal,
      scopes: record.scopes,
      grantType: this.grantType,
      resources,
      familyId: family.record.familyId,
      clientIdUrl: documentUrl,
      jkt,
    });
    return withRefreshToken(response, family.value);
  }

  /**
   * The DPoP key of the request (RFC 9449 §5), which must be the one the authorization
   * request named in `dpop_jkt` when it did (§10): a code bound to a key is the key holder's.
   */
  private async boundKey(
    context: TokenRequestContext,
    required: boolean | null,
    codeJkt: string | null,
  ): Promise<string | undefined> {
    if (codeJkt !== null && context.dpop === undefined)
      throw new OAuthError(
        'invalid_dpop_proof',
        'this authorization code is bound to a DPoP key (dpop_jkt): send a proof made with it',
      );
    const jkt = await this.dpop.forTokenRequest(context.dpop, codeJkt === null ? required : true);
    if (codeJkt !== null && jkt !== codeJkt)
      throw new OAuthError(
        'invalid_grant',
        'the DPoP proof is made with another key than the authorization request named',
      );
    return jkt;
  }
}
