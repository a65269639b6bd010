import { canonicalIdProblem, isCanonicalUuid, isUuidShaped } from '@broker/domain';
import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import type { TokenForm } from '../token/token-form';
import { ACCESS_TOKEN_TYPE, JWT_BEARER, JWT_TOKEN_TYPE } from '../token-exchange/token-types';
import { ImpersonationRefusal as Refusal } from './impersonation-refusal';

/** A credential as presented: its bytes and what its unverified header and claims say. */
export interface Presented {
  readonly jwt: string;
  readonly alg: string;
  readonly claims: JWTPayload;
  readonly unsigned: boolean;
}

/** The three credentials of an impersonation request, decoded but not verified. */
export interface PresentedCredentials {
  readonly client: Presented;
  readonly actor: Presented;
  readonly subject: Presented;
}

/** A well-formed impersonation request: the target named by the audience and the credentials. */
export interface ImpersonationRequest {
  /** The audience suffix: a canonical lower-case agent UUID or a canonical_id. */
  readonly targetSuffix: string;
  readonly credentials: PresentedCredentials;
  readonly scope: string | undefined;
}

/**
 * Parses an impersonation request in this error order: the audience (its suffix), the
 * request's shape, then the three JWTs; each problem is `invalid_request`.
 */
export function parseImpersonationRequest(form: TokenForm, audiencePrefix: string): ImpersonationRequest {
  const targetSuffix = targetSuffixOf(form.get('audience'), audiencePrefix);
  checkRequestShape(form);
  return { targetSuffix, credentials: presentedCredentials(form), scope: form.get('scope') };
}

/** `audience` is the impersonation prefix itself or lies under it (`<prefix>/...`). */
export function isUnderPrefix(audience: string, prefix: string): boolean {
  return audience === prefix || audience.startsWith(`${prefix}/`);
}

/**
 * `<prefix>/<suffix>`: one segment, a lower-case canonical UUID or a well-formed
 * canonical_id. Every other audience is `invalid_request` (bare prefix, bare
 * suffix, suffix matching neither identifier form); the description never names the
 * configured prefix.
 */
function targetSuffixOf(audience: string | undefined, prefix: string): string {
  if (audience === undefined || audience === '')
    throw new Refusal(
      'invalid_request',
      'audience is required: the impersonation prefix followed by /<agent id or canonical_id>',
      'audience_missing',
    );
  if (!isUnderPrefix(audience, prefix)) {
    const bareSuffix = isUuidShaped(audience) || canonicalIdProblem(audience) === undefined;
    throw new Refusal(
      'invalid_request',
      bareSuffix
        ? 'the audience names an agent without the impersonation prefix'
        : 'the audience is not an impersonation audience',
      bareSuffix ? 'audience_bare_suffix' : 'audience_outside_prefix',
    );
  }
  const suffix = audience.slice(prefix.length + 1);
  if (audience === prefix || suffix === '')
    throw new Refusal('invalid_request', 'the audience names no target agent', 'audience_bare_prefix');
  if (suffix.includes('/'))
    throw new Refusal('invalid_request', 'the audience suffix must be one path segment', 'audience_extra_segments');
  if (isUuidShaped(suffix)) {
    if (!isCanonicalUuid(suffix))
      throw new Refusal(
        'invalid_request',
        'an agent UUID in the audience must be canonical lower-case',
        'audience_uuid_not_canonical',
      );
  } else if (canonicalIdProblem(suffix) !== undefined) {
    throw new Refusal(
      'invalid_request',
      'the audience suffix is neither an agent UUID nor a canonical_id',
      'audience_suffix_malformed',
    );
  }
  return suffix;
}

/** No `resource`; only the access-token type may be requested. */
function checkRequestShape(form: TokenForm): void {
  if (form.has('resource'))
    throw new Refusal('invalid_request', 'resource is not allowed with impersonation', 'resource_present');
  const requested = form.get('requested_token_type');
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE)
    throw new Refusal('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}`, 'requested_token_type');
  if (form.get('client_assertion_type') !== JWT_BEARER)
    throw new Refusal('invalid_request', `client_assertion_type must be ${JWT_BEARER}`, 'malformed_credentials');
  if (form.get('actor_token_type') !== JWT_TOKEN_TYPE)
    throw new Refusal('invalid_request', `actor_token_type must be ${JWT_TOKEN_TYPE}`, 'malformed_credentials');
  if (form.get('subject_token_type') !== JWT_TOKEN_TYPE)
    throw new Refusal('invalid_request', `subject_token_type must be ${JWT_TOKEN_TYPE}`, 'malformed_credentials');
}

/** The three JWTs, decoded (unverified) once; a missing or malformed one is invalid_request. */
function presentedCredentials(form: TokenForm): PresentedCredentials {
  const read = (field: string): Presented => {
    const jwt = form.get(field);
    if (jwt === undefined || jwt === '')
      throw new Refusal('invalid_request', `${field} is required`, 'malformed_credentials');
    try {
      const header = decodeProtectedHeader(jwt);
      const claims = decodeJwt(jwt);
      const alg = typeof header.alg === 'string' ? header.alg : '';
      return { jwt, alg, claims, unsigned: alg === 'none' && jwt.endsWith('.') };
    } catch {
      throw new Refusal('invalid_request', `${field} is not a well-formed JWT`, 'malformed_credentials');
    }
  };
  return { client: read('client_assertion'), actor: read('actor_token'), subject: read('subject_token') };
}
