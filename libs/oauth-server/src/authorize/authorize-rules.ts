import { isCanonicalUuid, isRedirectUri, isUuidShaped, OAuthError, type Agent } from '@broker/domain';

/** A query parameter given once; repeated parameters are treated as invalid (RFC 6749 §3.1). */
export function single(query: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = query[name];
  return typeof value === 'string' ? value : undefined;
}

/** `client_id` must be an agent's UUID. */
export function assertClientIdShape(clientId: string | undefined): string {
  if (clientId === undefined || !isUuidShaped(clientId))
    throw new OAuthError('invalid_client', 'client_id is not a registered client');
  return isCanonicalUuid(clientId.toLowerCase()) ? clientId.toLowerCase() : clientId;
}

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::\d{1,5})?(\/[^#]*)?$/;

/**
 * RFC 8252 §7.3: for a loopback IP literal the port may vary. The rest of the string is
 * compared as is (no normalisation), so only the port is ever ignored.
 */
function loopbackWithoutPort(uri: string): string | undefined {
  const match = LOOPBACK.exec(uri);
  return match ? `http://${match[1] as string}${match[2] ?? ''}` : undefined;
}

/**
 * Checked again before every redirect to a client: an agent stored before the
 * rule (or written to the database directly) with a `javascript:`, `data:` or other
 * forbidden redirect URI is answered with JSON `invalid_redirect_uri`, never sent there.
 */
export function assertRedirectUriScheme(redirectUri: string): void {
  if (!isRedirectUri(redirectUri))
    throw new OAuthError(
      'invalid_redirect_uri',
      'redirect_uri must be https, http on loopback or a private-use scheme',
    );
}

/** What an authorization response carries besides `iss`: a `code`, or an `error` (RFC 6749 §4.1.2, §4.1.2.1). */
export type AuthorizationResponseParams = Readonly<Record<string, string | undefined>> & { readonly iss?: never };

/**
 * The redirect to a client's (validated) redirect_uri with `params` added, checked once more
 * right before it is issued. Every one names the issuer (`iss`, RFC 9207 §2), success or
 * error alike: the metadata says `authorization_response_iss_parameter_supported`, so a client
 * that checks it would otherwise report a missing `iss` instead of the error.
 */
export function clientRedirect(redirectUri: string, issuer: string, params: AuthorizationResponseParams): string {
  assertRedirectUriScheme(redirectUri);
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/**
 * RFC 6749 §3.1.2.3: the redirect_uri must be one the agent registered, compared as exact
 * strings (no normalisation: `/cb/../x`, other case, an added query or user info all fail),
 * except the port of a loopback IP literal (RFC 8252).
 */
export function assertRedirectUriRegistered(agent: Agent, redirectUri: string | undefined): string {
  if (redirectUri === undefined || redirectUri === '')
    throw new OAuthError('invalid_redirect_uri', 'redirect_uri is required');
  assertRedirectUriScheme(redirectUri);
  if (agent.redirectUris.includes(redirectUri)) return redirectUri;
  const asked = loopbackWithoutPort(redirectUri);
  if (asked !== undefined && agent.redirectUris.some((registered) => loopbackWithoutPort(registered) === asked))
    return redirectUri;
  throw new OAuthError('invalid_redirect_uri', 'redirect_uri is not registered for this client');
}

/** RFC 6749 §3.1.1: only the authorization code flow. */
export function assertResponseTypeCode(responseType: string | undefined): void {
  if (responseType !== 'code')
    throw new OAuthError('unsupported_response_type', 'only response_type=code is supported');
}

/** RFC 7636 §4.3 (and OAuth 2.1): a code challenge is required, and only S256. */
export function assertPkceS256Challenge(challenge: string | undefined, method: string | undefined): string {
  if (challenge === undefined || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
    throw new OAuthError('invalid_request', 'a code_challenge (S256, 43 base64url characters) is required');
  if (method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256');
  return challenge;
}
