import { ASYMMETRIC_ALGORITHMS, isHttpUrl } from '@broker/domain';
import { z } from 'zod';
import { ConfigError } from './config-error';
import { parseDuration } from './duration';
import { oneOrMany } from './one-or-many';

const SECTION = 'oauth2_authorization_server.enterprise';

const httpUri = z
  .string()
  .refine((value) => isHttpUrl(value, { userInfo: false }), 'must be an absolute http(s) URI without user info');

/**
 * One enterprise IdP whose Identity Assertion JWT Authorization Grants the broker accepts
 * (docs/oauth2.md "Enterprise-managed authorization"). Its keys come from `jwks_uri`, or from
 * the `jwks_uri` of its RFC 8414 (then OpenID) metadata with `discovery: true`. The principal
 * expression is compiled by libs/oauth-server at start-up.
 */
const trustedIssuer = z.strictObject({
  issuer_uri: httpUri,
  jwks_uri: httpUri.optional(),
  discovery: z.boolean().default(false),
  allowed_algorithms: oneOrMany(
    z.enum(ASYMMETRIC_ALGORITHMS),
    `must be one or a list of ${ASYMMETRIC_ALGORITHMS.join(', ')}`,
  )
    .refine((list) => list.length > 0, 'must name at least one algorithm')
    .default(['ES256', 'RS256']),
  principal_expression: z.string().min(1).default('id_jag.sub'),
  tenant: z.string().min(1).optional(),
});

const lifetime = z
  .union([z.string(), z.number()])
  .default('5m')
  .transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === undefined || ms <= 0) {
      ctx.addIssue({ code: 'custom', message: `must be a duration such as 30s or 5m (got ${JSON.stringify(value)})` });
      return z.NEVER;
    }
    return ms;
  });

/** `oauth2_authorization_server.enterprise`: off (no trusted issuer) by default. */
export const enterpriseSchema = z
  .strictObject({
    trusted_issuers: oneOrMany(trustedIssuer, 'must be a trusted issuer or a list of them').default([]),
    max_assertion_lifetime: lifetime,
  })
  .prefault({});

type EnterpriseSection = z.output<typeof enterpriseSchema>;

/**
 * The checks that span keys, once the shape is valid: local or hybrid mode only (the grant
 * issues the broker's own tokens); unique issuers; exactly one of `jwks_uri` and `discovery`.
 */
export function checkEnterprise(section: EnterpriseSection, mode: string): void {
  if (section.trusted_issuers.length === 0) return;
  if (mode === 'proxy') throw new ConfigError(SECTION, 'is available only in local and hybrid modes (mode is proxy)');
  const seen = new Set<string>();
  section.trusted_issuers.forEach((issuer, index) => {
    const key = `${SECTION}.trusted_issuers[${index}]`;
    if (seen.has(issuer.issuer_uri))
      throw new ConfigError(`${key}.issuer_uri`, `"${issuer.issuer_uri}" is listed by an earlier trusted issuer`);
    seen.add(issuer.issuer_uri);
    if (issuer.jwks_uri === undefined && !issuer.discovery)
      throw new ConfigError(key, 'needs jwks_uri, or discovery: true to read it from the issuer metadata');
    if (issuer.jwks_uri !== undefined && issuer.discovery)
      throw new ConfigError(key, 'has both jwks_uri and discovery: true; keep one');
  });
}
