import { ASYMMETRIC_ALGORITHMS, isHttpUrl, parseAbsoluteUrl } from '@broker/domain';
import { z } from 'zod';
import { ConfigError } from './config-error';
import { oneOrMany, valueAt, writtenPath } from './one-or-many';

/** The credential roles of an impersonation request (docs/configuration.md). */
export const IMPERSONATION_ROLES = ['client_assertion', 'actor', 'subject'] as const;
/** One of {@link IMPERSONATION_ROLES}. */
export type ImpersonationRole = (typeof IMPERSONATION_ROLES)[number];

const SECTION = 'oauth2_authorization_server.impersonation';
const RULES_PATH = ['oauth2_authorization_server', 'impersonation', 'rules'] as const;

const absoluteUri = z
  .string()
  .refine((value) => (parseAbsoluteUrl(value)?.host ?? '') !== '', 'must be an absolute URI');
const httpUri = z.string().refine((value) => isHttpUrl(value), 'must be an absolute http(s) URI');

const roleShape = {
  expected_audience: absoluteUri.optional(),
  principal_expression: z.string().min(1).optional(),
};

/**
 * One impersonation rule's shape, with its defaults and one-or-many lists. Its CEL
 * expressions are compiled by libs/oauth-server at start-up (config cannot import the
 * compiler's consumers); everything else about a rule is checked here.
 */
const ruleShape = z.strictObject({
  name: z.string().min(1).max(128),
  roles: z.strictObject({
    client_assertion: z.strictObject(roleShape).prefault({}),
    actor: z.strictObject(roleShape).prefault({}),
    subject: z
      .strictObject({
        ...roleShape,
        email_expression: z.string().min(1).optional(),
        verification: z.enum(['jwks', 'none']).default('jwks'),
      })
      .prefault({}),
  }),
  trusted_issuers: oneOrMany(
    z.strictObject({
      issuer_uri: httpUri,
      jwks_uri: httpUri,
      allowed_algorithms: oneOrMany(
        z.enum(ASYMMETRIC_ALGORITHMS),
        `must be one or a list of ${ASYMMETRIC_ALGORITHMS.join(', ')}`,
      )
        .refine((list) => list.length > 0, 'must name at least one algorithm')
        .default(['ES256', 'RS256']),
      signs_roles: oneOrMany(
        z.enum(IMPERSONATION_ROLES),
        `must be one or a list of ${IMPERSONATION_ROLES.join(', ')}`,
      ).refine((list) => list.length > 0, 'must name at least one role'),
    }),
    'must be a trusted issuer or a list of them',
  ).refine((list) => list.length > 0, 'must name at least one trusted issuer'),
  authorization: z.strictObject({ cel: z.strictObject({ expression: z.string().min(1) }) }),
});

/**
 * `oauth2_authorization_server.impersonation`. A rule is first checked to be a mapping (so
 * a scalar is reported at the list, as for every other key), then against its shape, whose
 * issues `impersonationIssueKey` names by rule.
 */
export const impersonationSchema = z
  .strictObject({
    audience_prefix: z.string().optional(),
    rules: oneOrMany(z.record(z.string(), z.unknown()).pipe(ruleShape), 'must be a rule or a list of rules').default(
      [],
    ),
  })
  .prefault({});

type ImpersonationSection = z.output<typeof impersonationSchema>;

/** `rules[<index>] (<name>)`: the rule as the operator finds it in the file. */
function ruleLabel(index: number, name: unknown): string {
  return typeof name === 'string' ? `${SECTION}.rules[${index}] (${name})` : `${SECTION}.rules[${index}]`;
}

/**
 * The key naming an issue inside an impersonation rule, `rules[0] (name).trusted_issuers[1].jwks_uri`
 * (list indices in brackets, the rule's name beside its index, a one-or-many key given as one
 * value without its implicit `[0]`); undefined for an issue anywhere else.
 */
export function impersonationIssueKey(input: unknown, issue: z.core.$ZodIssue): string | undefined {
  const { path } = issue;
  const index = path[RULES_PATH.length];
  if (typeof index !== 'number' || !RULES_PATH.every((segment, i) => path[i] === segment)) return undefined;
  const inside = path.slice(RULES_PATH.length + 1);
  // A rule that is not a mapping at all is reported like any other list item.
  if (inside.length === 0 && issue.code !== 'unrecognized_keys') return undefined;
  const rules = valueAt(input, RULES_PATH);
  const raw: unknown = Array.isArray(rules) ? rules[index] : rules;
  const name = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>).name : undefined;
  const written = writtenPath(raw, inside)
    .map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`))
    .join('');
  return `${ruleLabel(index, name)}${written}`;
}

/** `audience_prefix`: absolute http(s) with a host; no query, fragment, userinfo or trailing slash. */
function prefixProblem(prefix: string): string | undefined {
  const url = parseAbsoluteUrl(prefix);
  if (url === undefined) return 'must be an absolute http(s) URI';
  if (!isHttpUrl(url)) return 'must be an absolute http(s) URI with a host';
  if (prefix.includes('?') || prefix.includes('#')) return 'must not have a query or fragment';
  if (url.username !== '' || url.password !== '' || prefix.includes('@')) return 'must not carry userinfo';
  if (prefix.endsWith('/')) return 'must not end with a slash';
  return undefined;
}

function fail(key: string, message: string): never {
  throw new ConfigError(key, message);
}

/**
 * The impersonation checks that span keys (docs/configuration.md), run once the
 * shape is valid: local mode only; the prefix required and well-formed; unique rule names;
 * every signed role covered by a trusted issuer's `signs_roles`; a `verification: none` rule
 * with no signed subject and no subject audience (an unsigned subject proves no audience).
 * What needs the broker's issuer or the CEL compiler is checked by libs/oauth-server.
 */
export function checkImpersonation(section: ImpersonationSection, mode: string): void {
  if (section.audience_prefix === undefined && section.rules.length === 0) return;
  if (mode !== 'local') fail(SECTION, `is available only in local mode (mode is ${mode})`);
  if (section.audience_prefix === undefined)
    fail(`${SECTION}.audience_prefix`, 'is required when impersonation rules are configured');
  const problem = prefixProblem(section.audience_prefix);
  if (problem !== undefined) fail(`${SECTION}.audience_prefix`, problem);
  const names = new Set<string>();
  section.rules.forEach((rule, index) => {
    const label = ruleLabel(index, rule.name);
    if (names.has(rule.name))
      fail(`${label}.name`, `"${rule.name}" is used by an earlier rule: rule names must be unique`);
    names.add(rule.name);
    const unverified = rule.roles.subject.verification === 'none';
    const signedRoles: ImpersonationRole[] = unverified
      ? ['client_assertion', 'actor']
      : ['client_assertion', 'actor', 'subject'];
    for (const role of signedRoles) {
      if (!rule.trusted_issuers.some((issuer) => issuer.signs_roles.includes(role)))
        fail(`${label}.trusted_issuers`, `no trusted issuer signs the ${role} role`);
    }
    if (!unverified) return;
    rule.trusted_issuers.forEach((issuer, i) => {
      if (issuer.signs_roles.includes('subject'))
        fail(`${label}.trusted_issuers[${i}].signs_roles`, 'a verification: none rule has no signed subject');
    });
    if (rule.roles.subject.expected_audience !== undefined)
      fail(
        `${label}.roles.subject.expected_audience`,
        'is not allowed with verification: none (an unsigned subject proves no audience)',
      );
  });
}
