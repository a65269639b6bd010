import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { isCanonicalUuid, isUuidShaped, type CompiledExpression } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { JwtRejected } from '../jwt/jwt-verifier';
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
 * expressions are compiled at boot; a syntax error stops start-up naming the key.
 */
@Injectable()
export class GatewayCredentials {
  private readonly principalOf: CompiledExpression;
  private readonly agentIdOf: CompiledExpression;
  private readonly authorizes: CompiledExpression;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly anchor: TrustAnchor,
  ) {
    const extraction = config.token_exchange.claim_extraction;
    this.principalOf = compileConfigExpression('token_exchange.claim_extraction.principal_expression', extraction.principal_expression, ['subject_token']);
    this.agentIdOf = compileConfigExpression('token_exchange.claim_extraction.agent_id_expression', extraction.agent_id_expression, ['subject_token']);
    this.authorizes = compileConfigExpression('token_exchange.authorization.cel.expression', config.token_exchange.authorization.cel.expression, ['client_assertion']);
  }

  /** The gateway's client assertion (RFC 7523): signature, issuer, our audience, expiry. */
  async verifyAssertion(assertion: string): Promise<JWTPayload> {
    try {
      return await this.anchor.verify(assertion, 'client_assertion');
    } catch (error) {
      if (error instanceof JwtRejected) throw new GatewayCredentialsRefused('assertion_invalid', 'the client assertion is not valid');
      throw error;
    }
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
