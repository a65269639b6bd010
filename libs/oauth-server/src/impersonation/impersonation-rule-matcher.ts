import { assertNever, type Clock } from '@broker/domain';
import type { BrokerMetrics } from '@broker/telemetry';
import type { JWTPayload } from 'jose';
import { CLOCK_TOLERANCE_SECONDS, JwtRejected, JwtVerifier } from '../jwt/jwt-verifier';
import { RemoteKeySet } from '../jwt/remote-key-set';
import { ImpersonationRefusal as Refusal } from './impersonation-refusal';
import type { Presented, PresentedCredentials } from './impersonation-request';
import type { ImpersonationRule, Role } from './impersonation-rules';

/** Why one rule did not match; the request's error is the highest in precedence over all rules. */
type RuleMiss = 'access_denied' | 'invalid_request' | 'invalid_client';
const PRECEDENCE: readonly RuleMiss[] = ['access_denied', 'invalid_request', 'invalid_client'];

/** `failure` of the refusals `firstMatch` answers after some rule verified the client assertion. */
const AFTER_CLIENT_VERIFIED: ReadonlySet<string> = new Set(['no_rule_permits', 'credentials_not_valid']);

/**
 * Whether `firstMatch` refused after a rule had verified the client assertion (RFC 7523
 * §3): its access_denied and invalid_request. Its invalid_client means no rule did.
 */
export function refusedAfterClientVerified(error: unknown): boolean {
  return error instanceof Refusal && AFTER_CLIENT_VERIFIED.has(error.failure);
}

/** The first rule that matched, with the verified claims of each credential. */
export interface RuleMatch {
  readonly rule: ImpersonationRule;
  readonly client: JWTPayload;
  readonly actor: JWTPayload;
  readonly subject: JWTPayload;
}

/**
 * Matches an impersonation request's credentials against the configured rules
 * (docs/oauth2.md, "User impersonation"). Trusted issuers' keys are fetched once per JWKS URI and verified
 * tokens remembered until `exp` (`JwtVerifier`); the verifiers are built once, at boot.
 */
export class ImpersonationRuleMatcher {
  /** One verifier per (issuer, JWKS URI), one key set per JWKS URI. */
  private readonly verifiers = new Map<string, JwtVerifier>();

  constructor(
    private readonly rules: readonly ImpersonationRule[],
    private readonly brokerIssuer: string,
    private readonly clock: Clock,
    metrics?: BrokerMetrics,
  ) {
    const keySets = new Map<string, RemoteKeySet>();
    for (const rule of rules) {
      for (const issuer of rule.issuers) {
        const keys =
          keySets.get(issuer.jwksUri) ??
          new RemoteKeySet(issuer.jwksUri, clock, undefined, metrics?.keySet('impersonation'));
        keySets.set(issuer.jwksUri, keys);
        const id = `${issuer.issuer} ${issuer.jwksUri}`;
        if (!this.verifiers.has(id)) this.verifiers.set(id, new JwtVerifier(issuer.issuer, keys, clock, metrics));
      }
    }
  }

  /**
   * Rules in order, first match: the client assertion (→ invalid_client), the actor and the
   * subject (→ invalid_request), then the predicate (→ access_denied). With no match the
   * error is the highest in precedence any rule reached: access_denied, invalid_request,
   * invalid_client.
   */
  async firstMatch(credentials: PresentedCredentials): Promise<RuleMatch> {
    const misses = new Set<RuleMiss>();
    for (const rule of this.rules) {
      const client = await this.verifyRole(rule, 'client_assertion', credentials.client);
      if (client === undefined) {
        misses.add('invalid_client');
        continue;
      }
      const actor = await this.verifyRole(rule, 'actor', credentials.actor);
      const subject =
        rule.subject.verification === 'none'
          ? this.acceptUnsigned(credentials.subject)
          : await this.verifyRole(rule, 'subject', credentials.subject);
      if (actor === undefined || subject === undefined) {
        misses.add('invalid_request');
        continue;
      }
      let allowed: unknown;
      try {
        allowed = rule.predicate({ client_assertion: client, actor_token: actor, subject_token: subject });
      } catch {
        allowed = false;
      }
      if (allowed === true) return { rule, client, actor, subject };
      misses.add('access_denied');
    }
    const code = PRECEDENCE.find((miss) => misses.has(miss)) ?? 'invalid_client';
    switch (code) {
      case 'access_denied':
        throw new Refusal('access_denied', 'no impersonation rule permits this request', 'no_rule_permits');
      case 'invalid_request':
        throw new Refusal('invalid_request', 'the actor or subject token is not valid', 'credentials_not_valid');
      case 'invalid_client':
        throw new Refusal('invalid_client', 'the client assertion is not trusted', 'client_not_trusted');
      default:
        return assertNever(code, 'rule miss');
    }
  }

  /** A signed credential of this role under this rule: a trusted issuer for the role, its keys, audience, expiry. */
  private async verifyRole(rule: ImpersonationRule, role: Role, presented: Presented): Promise<JWTPayload | undefined> {
    // Unsigned client assertions and actor tokens are never accepted; nor an unsigned subject on a signed rule.
    if (presented.unsigned || presented.alg === 'none') return undefined;
    const issuer = rule.issuers.find(
      (candidate) => candidate.issuer === presented.claims.iss && candidate.roles.has(role),
    );
    if (issuer === undefined) return undefined;
    const verifier = this.verifiers.get(`${issuer.issuer} ${issuer.jwksUri}`);
    const roleRule = role === 'client_assertion' ? rule.clientAssertion : role === 'actor' ? rule.actor : rule.subject;
    // A client assertion is addressed to us (RFC 7523 §3) unless the rule names another audience.
    const audience = roleRule.expectedAudience ?? (role === 'client_assertion' ? this.brokerIssuer : undefined);
    try {
      return await verifier?.verify(presented.jwt, {
        purpose: `impersonation:${rule.index}:${role}`,
        audience: audience === undefined ? undefined : [audience],
        algorithms: issuer.algorithms,
      });
    } catch (error) {
      if (error instanceof JwtRejected) return undefined;
      throw error;
    }
  }

  /** The unverified-subject profile: only an unsigned (`alg: none`) JWT, still within its `exp`/`nbf`. */
  private acceptUnsigned(presented: Presented): JWTPayload | undefined {
    if (!presented.unsigned) return undefined;
    const now = this.clock.nowMs() / 1000;
    const { exp, nbf } = presented.claims;
    if (exp !== undefined && (typeof exp !== 'number' || exp + CLOCK_TOLERANCE_SECONDS <= now)) return undefined;
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf - CLOCK_TOLERANCE_SECONDS > now)) return undefined;
    return presented.claims;
  }
}
