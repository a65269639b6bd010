import { createHash } from 'node:crypto';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, isCanonicalUuid, isUuidShaped, type CompiledExpression } from '@broker/domain';
import { ClientAssertionReplayRepository } from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { CLOCK_TOLERANCE_SECONDS, JwtRejected } from '../jwt/jwt-verifier';
import { compileConfigExpression } from '../token/config-expression';
import { TrustAnchor } from './trust-anchor';

/** Why a gateway's credentials were refused; each surface maps it to its own error. */
export type GatewayRefusal = 'assertion_invalid' | 'subject_invalid' | 'identity_missing' | 'not_authorized';

export class GatewayCredentialsRefused extends Error {
  constructor(
    readonly refusal: GatewayRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayCredentialsRefused';
  }
}

/** The user and agent a verified subject token speaks for. */
export interface SubjectIdentity {
  readonly principal: string;
  readonly agentId: string;
}

/**
 * A gateway's credentials as the token exchange and the approvals API check them
 * (SPEC.md "Third-party token exchange" steps 1-3): the client assertion and the user's
 * subject token against the trust anchor, the principal and agent id by the configured
 * claim expressions, and the authorization expression over the assertion's claims. The
 * expressions are compiled at boot; a syntax error stops start-up naming the key. With
 * `token_exchange.client_assertion.single_use`, every presentation of an assertion (a
 * cached verification included) must also be the first use of its `jti`.
 */
@Injectable()
export class GatewayCredentials {
  private readonly principalOf: CompiledExpression;
  private readonly agentIdOf: CompiledExpression;
  private readonly authorizes: CompiledExpression;
  /** Set only with `single_use`: without it, an assertion costs nothing more than its verification. */
  private readonly replays: ClientAssertionReplayRepository | undefined;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly anchor: TrustAnchor,
    replays: ClientAssertionReplayRepository,
    private readonly clock: Clock,
  ) {
    this.replays = config.token_exchange.client_assertion.single_use ? replays : undefined;
    const extraction = config.token_exchange.claim_extraction;
    this.principalOf = compileConfigExpression('token_exchange.claim_extraction.principal_expression', extraction.principal_expression, ['subject_token']);
    this.agentIdOf = compileConfigExpression('token_exchange.claim_extraction.agent_id_expression', extraction.agent_id_expression, ['subject_token']);
    this.authorizes = compileConfigExpression('token_exchange.authorization.cel.expression', config.token_exchange.authorization.cel.expression, ['client_assertion']);
  }

  /** The gateway's client assertion (RFC 7523): signature, issuer, our audience, expiry, type; its `jti` once with `single_use`. */
  async verifyAssertion(assertion: string): Promise<JWTPayload> {
    let claims: JWTPayload;
    try {
      claims = await this.anchor.verify(assertion, 'client_assertion');
    } catch (error) {
      if (error instanceof JwtRejected) throw new GatewayCredentialsRefused('assertion_invalid', 'the client assertion is not valid');
      throw error;
    }
    if (this.replays !== undefined) await this.assertFirstUse(claims, this.replays);
    return claims;
  }

  /**
   * RFC 7523 §3: a `jti` is accepted once within its assertion's lifetime (`exp` plus the
   * leeway it was verified with), on every replica; an assertion without one is refused.
   * Checked after the signature, so nobody but the issuer can spend a `jti`.
   */
  private async assertFirstUse(claims: JWTPayload, replays: ClientAssertionReplayRepository): Promise<void> {
    if (typeof claims.jti !== 'string' || claims.jti === '') throw new GatewayCredentialsRefused('assertion_invalid', 'the client assertion has no jti (single use is required)');
    const jtiSha256 = createHash('sha256').update(claims.jti).digest();
    const expiresAt = new Date(((claims.exp as number) + CLOCK_TOLERANCE_SECONDS) * 1000);
    if (!(await replays.claimFirstUse(jtiSha256, expiresAt, this.clock.now()))) throw new GatewayCredentialsRefused('assertion_invalid', 'the client assertion was already used');
  }

  /** The user's subject token, verified by the same anchor for `token_exchange.subject_token.audience`. */
  async verifySubject(token: string): Promise<JWTPayload> {
    try {
      return await this.anchor.verify(token, 'subject_token');
    } catch (error) {
      if (error instanceof JwtRejected) throw new GatewayCredentialsRefused('subject_invalid', 'the subject token is not valid');
      throw error;
    }
  }

  /** Principal and agent id by the configured expressions (agent id: a UUID, lower-cased). */
  identify(subject: JWTPayload): SubjectIdentity {
    let principal: unknown;
    let agentId: unknown;
    try {
      principal = this.principalOf({ subject_token: subject });
      agentId = this.agentIdOf({ subject_token: subject });
    } catch {
      throw new GatewayCredentialsRefused('identity_missing', 'the subject token lacks the principal or agent claim');
    }
    if (typeof principal !== 'string' || principal.trim() === '' || principal.length > 200) throw new GatewayCredentialsRefused('identity_missing', 'the subject token has no usable principal claim');
    if (typeof agentId !== 'string' || !isUuidShaped(agentId)) throw new GatewayCredentialsRefused('identity_missing', 'the subject token has no usable agent claim');
    const agent = agentId.toLowerCase();
    return { principal: principal.trim(), agentId: isCanonicalUuid(agent) ? agent : agentId };
  }

  /** The authorization expression over the client assertion's claims (`true` admits all). */
  assertAuthorized(assertion: JWTPayload): void {
    let allowed: unknown;
    try {
      allowed = this.authorizes({ client_assertion: assertion });
    } catch {
      allowed = false;
    }
    if (allowed !== true) throw new GatewayCredentialsRefused('not_authorized', 'the gateway is not authorized');
  }
}
