import { ConfigError, oneOrMany, writtenPath, type BrokerConfig } from '@broker/config';
import { celReferences, type CompiledExpression } from '@broker/domain';
import { ASYMMETRIC_ALGORITHMS } from '../jwt/jwt-verifier';
import { compileConfigExpression } from '../token/config-expression';
import { z } from 'zod';

/** The credential roles of an impersonation request. */
export const ROLES = ['client_assertion', 'actor', 'subject'] as const;
export type Role = (typeof ROLES)[number];


/** The CEL variable each role's token is bound to. */
export const ROLE_VARIABLE: Readonly<Record<Role, string>> = { client_assertion: 'client_assertion', actor: 'actor_token', subject: 'subject_token' };
const PREDICATE_VARIABLES = ['client_assertion', 'actor_token', 'subject_token'];
const DEFAULT_EMAIL_EXPRESSION = "has(subject_token.email) ? subject_token.email : ''";

const absoluteUri = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.host !== '';
  } catch {
    return false;
  }
}, 'must be an absolute URI');
const httpUri = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.host !== '';
  } catch {
    return false;
  }
}, 'must be an absolute http(s) URI');

const roleShape = {
  expected_audience: absoluteUri.optional(),
  principal_expression: z.string().min(1).optional(),
};
const ruleSchema = z.strictObject({
  name: z.string().min(1).max(128),
  roles: z.strictObject({
    client_assertion: z.strictObject(roleShape).prefault({}),
    actor: z.strictObject(roleShape).prefault({}),
    subject: z.strictObject({ ...roleShape, email_expression: z.string().min(1).optional(), verification: z.enum(['jwks', 'none']).default('jwks') }).prefault({}),
  }),
  trusted_issuers: oneOrMany(
    z.strictObject({
      issuer_uri: httpUri,
      jwks_uri: httpUri,
      allowed_algorithms: oneOrMany(z.enum(ASYMMETRIC_ALGORITHMS), `must be one or a list of ${ASYMMETRIC_ALGORITHMS.join(', ')}`)
        .refine((list) => list.length > 0, 'must name at least one algorithm')
        .default(['ES256', 'RS256']),
      signs_roles: oneOrMany(z.enum(ROLES), `must be one or a list of ${ROLES.join(', ')}`).refine((list) => list.length > 0, 'must name at least one role'),
    }),
    'must be a trusted issuer or a list of them',
  ).refine((list) => list.length > 0, 'must name at least one trusted issuer'),
  authorization: z.strictObject({ cel: z.strictObject({ expression: z.string().min(1) }) }),
});

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
  readonly subject: RoleRule & { readonly verification: 'jwks' | 'none'; readonly emailOf: CompiledExpression | undefined };
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

/** `audience_prefix`: absolute http(s) with a host; no query, fragment, userinfo or trailing slash. */
function prefixProblem(prefix: string): string | undefined {
  let url: URL;
  try {
    url = new URL(prefix);
  } catch {
    return 'must be an absolute http(s) URI';
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.host === '') return 'must be an absolute http(s) URI with a host';
  if (prefix.includes('?') || prefix.includes('#')) return 'must not have a query or fragment';
  if (url.username !== '' || url.password !== '' || prefix.includes('@')) return 'must not carry userinfo';
  if (prefix.endsWith('/')) return 'must not end with a slash';
  return undefined;
}

/**
 * Reads and validates `oauth2_authorization_server.impersonation` at start-up (API.md
 * "Impersonation rule shape"); an invalid rule stops start-up with a message naming the
 * rule and key. Checked: local mode only; the prefix's form; unique rule names; every
 * signed role covered by a trusted issuer's `signs_roles`; the broker's own issuer never
 * trusted for client assertions; `verification: none` takes no subject audience, needs a
 * predicate that reads `subject_token`, and issues an email only when the predicate reads
 * `subject_token.email` (an explicit `email_expression` without it is an error);
 * algorithms RS/PS/ES 256-512 and EdDSA only. Every expression is compiled here.
 */
export function readImpersonationSettings(config: BrokerConfig, brokerIssuer: string): ImpersonationSettings {
  const section = config.oauth2_authorization_server.impersonation;
  const base = 'oauth2_authorization_server.impersonation';
  const configured = section.audience_prefix !== undefined || section.rules.length > 0;
  if (!configured) return { audiencePrefix: undefined, rules: [] };
  if (config.oauth2_authorization_server.mode !== 'local') fail(base, `is available only in local mode (mode is ${config.oauth2_authorization_server.mode})`);
  if (section.audience_prefix === undefined) fail(`${base}.audience_prefix`, 'is required when impersonation rules are configured');
  const problem = prefixProblem(section.audience_prefix);
  if (problem !== undefined) fail(`${base}.audience_prefix`, problem);

  const names = new Set<string>();
  const rules = section.rules.map((raw, index): ImpersonationRule => {
    const label = typeof raw.name === 'string' ? `${base}.rules[${index}] (${raw.name})` : `${base}.rules[${index}]`;
    const parsed = ruleSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = writtenPath(raw, issue?.path ?? []).map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`)).join('');
      fail(`${label}${path}`, issue?.message ?? 'is invalid');
    }
    const rule = parsed.data;
    if (names.has(rule.name)) fail(`${label}.name`, `"${rule.name}" is used by an earlier rule: rule names must be unique`);
    names.add(rule.name);
    const unverified = rule.roles.subject.verification === 'none';
    const signedRoles: Role[] = unverified ? ['client_assertion', 'actor'] : ['client_assertion', 'actor', 'subject'];
    for (const role of signedRoles) {
      if (!rule.trusted_issuers.some((issuer) => issuer.signs_roles.includes(role))) fail(`${label}.trusted_issuers`, `no trusted issuer signs the ${role} role`);
    }
    rule.trusted_issuers.forEach((issuer, i) => {
      if (issuer.issuer_uri === brokerIssuer && issuer.signs_roles.includes('client_assertion')) fail(`${label}.trusted_issuers[${i}].signs_roles`, "the broker's own issuer is never trusted for client assertions");
      if (unverified && issuer.signs_roles.includes('subject')) fail(`${label}.trusted_issuers[${i}].signs_roles`, 'a verification: none rule has no signed subject');
    });
    const predicateKey = `${label}.authorization.cel.expression`;
    const predicate = compileConfigExpression(predicateKey, rule.authorization.cel.expression, PREDICATE_VARIABLES);
    const references = celReferences(rule.authorization.cel.expression);
    const subject = rule.roles.subject;
    let emailExpression: string | undefined = subject.email_expression ?? DEFAULT_EMAIL_EXPRESSION;
    if (unverified) {
      if (subject.expected_audience !== undefined) fail(`${label}.roles.subject.expected_audience`, 'is not allowed with verification: none (an unsigned subject proves no audience)');
      if (!references.has('subject_token') && ![...references].some((ref) => ref.startsWith('subject_token.'))) fail(predicateKey, 'must reference subject_token on a verification: none rule');
      if (!references.has('subject_token.email')) {
        if (subject.email_expression !== undefined) fail(`${label}.roles.subject.email_expression`, 'needs the predicate to bind subject_token.email on a verification: none rule');
        emailExpression = undefined;
      }
    }
    const role = (name: Role, shape: { expected_audience?: string | undefined; principal_expression?: string | undefined }): RoleRule => ({
      expectedAudience: shape.expected_audience,
      principalOf: compileConfigExpression(`${label}.roles.${name}.principal_expression`, shape.principal_expression ?? `${ROLE_VARIABLE[name]}.sub`, [ROLE_VARIABLE[name]]),
    });
    return {
      index,
      name: rule.name,
      clientAssertion: role('client_assertion', rule.roles.client_assertion),
      actor: role('actor', rule.roles.actor),
      subject: {
        ...role('subject', subject),
        verification: subject.verification,
        emailOf: emailExpression === undefined ? undefined : compileConfigExpression(`${label}.roles.subject.email_expression`, emailExpression, ['subject_token']),
      },
      issuers: rule.trusted_issuers.map((issuer) => ({ issuer: issuer.issuer_uri, jwksUri: issuer.jwks_uri, algorithms: issuer.allowed_algorithms, roles: new Set(issuer.signs_roles) })),
      predicate,
    };
  });
  return { audiencePrefix: section.audience_prefix, rules };
}
