import { ConfigError, type BrokerConfig, type ImpersonationRole } from '@broker/config';
import { celReferences, type CompiledExpression } from '@broker/domain';
import { compileConfigExpression } from '../token/config-expression';

/** The credential roles of an impersonation request (validated by libs/config). */
export type Role = ImpersonationRole;

/** The CEL variable each role's token is bound to. */
export const ROLE_VARIABLE: Readonly<Record<Role, string>> = {
  client_assertion: 'client_assertion',
  actor: 'actor_token',
  subject: 'subject_token',
};
const PREDICATE_VARIABLES = ['client_assertion', 'actor_token', 'subject_token'];
const DEFAULT_EMAIL_EXPRESSION = "has(subject_token.email) ? subject_token.email : ''";

export interface TrustedIssuerRule {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly algorithms: readonly string[];
  readonly roles: ReadonlySet<Role>;
}

export interface RoleRule {
  /** Undefined: the audience is not checked for this role. */
  readonly expectedAudience: string | undefined;
  readonly principalOf: CompiledExpression;
}

/** One validated rule, its expressions compiled. */
export interface ImpersonationRule {
  readonly index: number;
  readonly name: string;
  readonly clientAssertion: RoleRule;
  readonly actor: RoleRule;
  readonly subject: RoleRule & {
    readonly verification: 'jwks' | 'none';
    readonly emailOf: CompiledExpression | undefined;
  };
  readonly issuers: readonly TrustedIssuerRule[];
  readonly predicate: CompiledExpression;
}

export interface ImpersonationSettings {
  /** Undefined: impersonation is not configured. */
  readonly audiencePrefix: string | undefined;
  readonly rules: readonly ImpersonationRule[];
}

function fail(key: string, message: string): never {
  throw new ConfigError(key, message);
}

/**
 * Compiles `oauth2_authorization_server.impersonation` at start-up
 * (examples/config/impersonation.yaml). libs/config has already validated the section (local mode, the prefix's form, each
 * rule's shape, unique names, signed roles covered, `verification: none` without a signed or
 * audience-bound subject); what remains needs the broker's issuer or the CEL compiler: the
 * broker's own issuer is never trusted for client assertions, nor for an actor or subject whose
 * `expected_audience` is the broker's default audience (`local.default_audience`, RFC 9068 §3:
 * every token of ours requested without a resource carries it, so every one would pass); a
 * `verification: none` rule's predicate reads `subject_token`, and the rule issues an email
 * only when the predicate reads `subject_token.email` (an explicit `email_expression` without it is an error). Every
 * expression is compiled here, once; an error stops start-up naming the rule and key.
 */
export function readImpersonationSettings(config: BrokerConfig, brokerIssuer: string): ImpersonationSettings {
  const section = config.oauth2_authorization_server.impersonation;
  const base = 'oauth2_authorization_server.impersonation';
  if (section.audience_prefix === undefined) return { audiencePrefix: undefined, rules: [] };
  const defaultAudience = config.oauth2_authorization_server.local.default_audience ?? brokerIssuer;
  const rules = section.rules.map((rule, index): ImpersonationRule => {
    const label = `${base}.rules[${index}] (${rule.name})`;
    const unverified = rule.roles.subject.verification === 'none';
    rule.trusted_issuers.forEach((issuer, i) => {
      if (issuer.issuer_uri !== brokerIssuer) return;
      if (issuer.signs_roles.includes('client_assertion'))
        fail(
          `${label}.trusted_issuers[${i}].signs_roles`,
          "the broker's own issuer is never trusted for client assertions",
        );
      for (const role of ['actor', 'subject'] as const) {
        if (issuer.signs_roles.includes(role) && rule.roles[role].expected_audience === defaultAudience)
          fail(
            `${label}.roles.${role}.expected_audience`,
            `is the broker's default audience (${defaultAudience}) and the broker's own issuer signs this role: every token the broker issues without a resource would pass; expect another audience, or set oauth2_authorization_server.local.default_audience`,
          );
      }
    });
    const predicateKey = `${label}.authorization.cel.expression`;
    const predicate = compileConfigExpression(predicateKey, rule.authorization.cel.expression, PREDICATE_VARIABLES);
    const references = celReferences(rule.authorization.cel.expression);
    const subject = rule.roles.subject;
    let emailExpression: string | undefined = subject.email_expression ?? DEFAULT_EMAIL_EXPRESSION;
    if (unverified) {
      if (!references.has('subject_token') && ![...references].some((ref) => ref.startsWith('subject_token.')))
        fail(predicateKey, 'must reference subject_token on a verification: none rule');
      if (!references.has('subject_token.email')) {
        if (subject.email_expression !== undefined)
          fail(
            `${label}.roles.subject.email_expression`,
            'needs the predicate to bind subject_token.email on a verification: none rule',
          );
        emailExpression = undefined;
      }
    }
    const role = (
      name: Role,
      shape: { readonly expected_audience?: string | undefined; readonly principal_expression?: string | undefined },
    ): RoleRule => ({
      expectedAudience: shape.expected_audience,
      principalOf: compileConfigExpression(
        `${label}.roles.${name}.principal_expression`,
        shape.principal_expression ?? `${ROLE_VARIABLE[name]}.sub`,
        [ROLE_VARIABLE[name]],
      ),
    });
    return {
      index,
      name: rule.name,
      clientAssertion: role('client_assertion', rule.roles.client_assertion),
      actor: role('actor', rule.roles.actor),
      subject: {
        ...role('subject', subject),
        verification: subject.verification,
        emailOf:
          emailExpression === undefined
            ? undefined
            : compileConfigExpression(`${label}.roles.subject.email_expression`, emailExpression, ['subject_token']),
      },
      issuers: rule.trusted_issuers.map((issuer) => ({
        issuer: issuer.issuer_uri,
        jwksUri: issuer.jwks_uri,
        algorithms: issuer.allowed_algorithms,
        roles: new Set(issuer.signs_roles),
      })),
      predicate,
    };
  });
  return { audiencePrefix: section.audience_prefix, rules };
}
