import { createHash } from 'node:crypto';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, isCanonicalUuid, isUuidShaped, type CompiledExpression } from '@broker/domain';
import { AgentRepository, ClientAssertionReplayRepository } from '@broker/persistence';
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

/**
 * What a verified client assertion would say if it were a subject token: whether it names a
 * registered agent, and the principals it could speak for (its `sub`, and what the principal
 * expression extracts). Worked out once per verified assertion and remembered with it.
 */
interface AssertionParty {
  readonly namesAgent: boolean;
  readonly principals: readonly string[];
}

/** The user and agent a verified subject token speaks for. */
export interface SubjectIdentity {
  readonly principal: string;
  readonly agentId: string;
}

/**
 * A gateway's credentials as the token exchange and the approvals API check them
 * (docs/oauth2.md, "Token exchange for gateways", steps 1-3): the client assertion and the user's
 * subject token against the trust anchor, the principal and agent id by the configured
 * claim expressions, and the authorization expression over the assertion's claims. The
 * expressions are compiled at boot; a syntax error stops start-up naming the key. With
 * `token_exchange.client_assertion.single_use`, every presentation of an assertion (a
 * cached verification included) must also be the first use of its `jti`.
 *
 * A token the upstream issuer gave a person for an agent is never the gateway's credential
 * (docs/security.md, "A person's token is not the gateway"), whatever the authorization
 * expression admits: an assertion from which the subject-token claim extraction yields a
 * registered agent is refused (decided on its full verification, remembered with it), and
 * on the token exchange and approval create an assertion identical to the subject token,
 * or speaking for the subject token's principal, is refused too (two comparisons a request).
 */
@Injectable()
export class GatewayCredentials {
  private readonly principalOf: CompiledExpression;
  private readonly agentIdOf: CompiledExpression;
  private readonly authorizes: CompiledExpression;
  /** Set only with `single_use`: without it, an assertion costs nothing more than its verification. */
  private readonly replays: ClientAssertionReplayRepository | undefined;
  /**
   * The party each verified assertion would be as a subject token. Keyed by the verifier's
   * claims object, which is the same frozen object on every cache hit of one token, so a
   * reused assertion costs one map lookup; forgotten with the verification.
   */
  private readonly parties = new WeakMap<JWTPayload, AssertionParty>();
  /**
   * `identify` and `assertAuthorized`'s outcomes (a refusal included, thrown again on every
   * call), remembered per claims object like `parties`: the expressions are pure functions of
   * the claims, so a reused token's expressions are evaluated once. Only the verifier's cached
   * claims are remembered, which it freezes when it admits a token (on its second sight):
   * a token seen once is evaluated and forgotten, without a map entry.
   */
  private readonly identities = new WeakMap<JWTPayload, SubjectIdentity | GatewayCredentialsRefused>();
  private readonly authorizations = new WeakMap<JWTPayload, GatewayCredentialsRefused | null>();

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly anchor: TrustAnchor,
    replays: ClientAssertionReplayRepository,
    private readonly clock: Clock,
    private readonly agents: AgentRepository,
  ) {
    this.replays = config.token_exchange.client_assertion.single_use ? replays : undefined;
    const extraction = config.token_exchange.claim_extraction;
    this.principalOf = compileConfigExpression(
      'token_exchange.claim_extraction.principal_expression',
      extraction.principal_expression,
      ['subject_token'],
    );
    this.agentIdOf = compileConfigExpression(
      'token_exchange.claim_extraction.agent_id_expression',
      extraction.agent_id_expression,
      ['subject_token'],
    );
    this.authorizes = compileConfigExpression(
      'token_exchange.authorization.cel.expression',
      config.token_exchange.authorization.cel.expression,
      ['client_assertion'],
    );
  }

  /** The gateway's client assertion (RFC 7523): signature, issuer, our audience, expiry, type; its `jti` once with `single_use`. */
  async verifyAssertion(assertion: string): Promise<JWTPayload> {
    let claims: JWTPayload;
    try {
      claims = await this.anchor.verify(assertion, 'client_assertion');
    } catch (error) {
      if (error instanceof JwtRejected)
        throw new GatewayCredentialsRefused('assertion_invalid', 'the client assertion is not valid');
      throw error;
    }
    const party = this.parties.get(claims) ?? (await this.partyOf(claims));
    if (party.namesAgent)
      throw new GatewayCredentialsRefused(
        'assertion_invalid',
        "the client assertion is a token issued to a person for an agent, not the gateway's",
      );
    if (this.replays !== undefined) await this.assertFirstUse(claims, this.replays);
    return claims;
  }

  /**
   * The gateway and the person are two parties: the assertion may not be the subject token
   * itself, nor speak for the subject token's principal (its `sub`, or the principal the
   * configured expression extracts from it). Called with a verified assertion and the
   * identity of a verified subject token; costs a string comparison and a short list scan.
   */
  assertDistinctParties(
    assertionJwt: string,
    assertion: JWTPayload,
    subjectJwt: string,
    subject: SubjectIdentity,
  ): void {
    if (assertionJwt === subjectJwt)
      throw new GatewayCredentialsRefused('assertion_invalid', 'the client assertion is the subject token');
    const party = this.parties.get(assertion);
    // Every assertion that reaches here went through verifyAssertion, which remembered its party.
    if (party === undefined || party.principals.includes(subject.principal))
      throw new GatewayCredentialsRefused(
        'assertion_invalid',
        "the client assertion speaks for the subject token's principal",
      );
  }

  /** What `assertion` would be as a subject token (`AssertionParty`), remembered for its cached verifications. */
  private async partyOf(assertion: JWTPayload): Promise<AssertionParty> {
    const principals: string[] = [];
    if (typeof assertion.sub === 'string') principals.push(assertion.sub.trim());
    let principal: unknown;
    let agentId: unknown;
    try {
      principal = evaluateQuietly(this.principalOf, { subject_token: assertion });
    } catch {
      principal = undefined;
    }
    try {
      agentId = evaluateQuietly(this.agentIdOf, { subject_token: assertion });
    } catch {
      agentId = undefined;
    }
    if (typeof principal === 'string' && principal.trim() !== '') principals.push(principal.trim());
    // A gateway's own token may carry an `azp` (its client id at the issuer); only one naming an agent of ours is a person's.
    const namesAgent =
      typeof agentId === 'string' &&
      isUuidShaped(agentId) &&
      (await this.agents.findClient(agentId.toLowerCase())) !== undefined;
    const party: AssertionParty = { namesAgent, principals };
    this.parties.set(assertion, party);
    return party;
  }

  /**
   * RFC 7523 §3: a `jti` is accepted once within its assertion's lifetime (`exp` plus the
   * leeway it was verified with), on every replica; an assertion without one is refused.
   * Checked after the signature, so nobody but the issuer can spend a `jti`.
   */
  private async assertFirstUse(claims: JWTPayload, replays: ClientAssertionReplayRepository): Promise<void> {
    if (typeof claims.jti !== 'string' || claims.jti === '')
      throw new GatewayCredentialsRefused(
        'assertion_invalid',
        'the client assertion has no jti (single use is required)',
      );
    const jtiSha256 = createHash('sha256').update(claims.jti).digest();
    const expiresAt = new Date(((claims.exp as number) + CLOCK_TOLERANCE_SECONDS) * 1000);
    if (!(await replays.claimFirstUse(jtiSha256, expiresAt, this.clock.now())))
      throw new GatewayCredentialsRefused('assertion_invalid', 'the client assertion was already used');
  }

  /** The user's subject token, verified by the same anchor for `token_exchange.subject_token.audience`. */
  async verifySubject(token: string): Promise<JWTPayload> {
    try {
      return await this.anchor.verify(token, 'subject_token');
    } catch (error) {
      if (error instanceof JwtRejected)
        throw new GatewayCredentialsRefused('subject_invalid', 'the subject token is not valid');
      throw error;
    }
  }

  /** Principal and agent id by the configured expressions (agent id: a UUID, lower-cased). */
  identify(subject: JWTPayload): SubjectIdentity {
    let outcome = this.identities.get(subject);
    if (outcome === undefined) {
      outcome = this.identityOf(subject);
      if (!Object.isFrozen(subject)) {
        if (outcome instanceof GatewayCredentialsRefused) throw outcome;
        return outcome;
      }
      this.identities.set(subject, outcome);
    }
    if (outcome instanceof GatewayCredentialsRefused)
      throw new GatewayCredentialsRefused(outcome.refusal, outcome.message);
    return outcome;
  }

  private identityOf(subject: JWTPayload): SubjectIdentity | GatewayCredentialsRefused {
    let principal: unknown;
    let agentId: unknown;
    try {
      principal = evaluateQuietly(this.principalOf, { subject_token: subject });
      agentId = evaluateQuietly(this.agentIdOf, { subject_token: subject });
    } catch {
      return new GatewayCredentialsRefused('identity_missing', 'the subject token lacks the principal or agent claim');
    }
    if (typeof principal !== 'string' || principal.trim() === '' || principal.length > 200)
      return new GatewayCredentialsRefused('identity_missing', 'the subject token has no usable principal claim');
    if (typeof agentId !== 'string' || !isUuidShaped(agentId))
      return new GatewayCredentialsRefused('identity_missing', 'the subject token has no usable agent claim');
    const agent = agentId.toLowerCase();
    return Object.freeze({ principal: principal.trim(), agentId: isCanonicalUuid(agent) ? agent : agentId });
  }

  /** The authorization expression over the client assertion's claims (`true` admits all). */
  assertAuthorized(assertion: JWTPayload): void {
    let refusal = this.authorizations.get(assertion);
    if (refusal === undefined) {
      refusal = this.authorizationOf(assertion);
      if (!Object.isFrozen(assertion)) {
        if (refusal !== null) throw refusal;
        return;
      }
      this.authorizations.set(assertion, refusal);
    }
    if (refusal !== null) throw new GatewayCredentialsRefused(refusal.refusal, refusal.message);
  }

  private authorizationOf(assertion: JWTPayload): GatewayCredentialsRefused | null {
    let allowed: unknown;
    try {
      allowed = evaluateQuietly(this.authorizes, { client_assertion: assertion });
    } catch {
      allowed = false;
    }
    return allowed === true ? null : new GatewayCredentialsRefused('not_authorized', 'the gateway is not authorized');
  }
}

/**
 * Evaluates `expression` with the error stack traces off: an evaluation error here (a claim
 * the token lacks) is a refusal or an absent value, never logged, so its stack would only
 * cost the time to capture it on every request with a fresh token.
 */
function evaluateQuietly(expression: CompiledExpression, context: Readonly<Record<string, unknown>>): unknown {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return expression(context);
  } finally {
    Error.stackTraceLimit = limit;
  }
}
