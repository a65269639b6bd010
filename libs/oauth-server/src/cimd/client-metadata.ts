import { isHttpsOrLoopbackUrl, isRedirectUri } from '@broker/domain';
import { CimdFetchError } from './cimd-fetcher';

/** What the broker keeps of a client metadata document once it is validated (never the whole body). */
export interface ClientMetadata {
  readonly redirectUris: readonly string[];
  readonly logoUri: string | null;
}

/** Shared-secret methods a metadata-document client may not declare (it has no secret with us). */
const SHARED_SECRET_METHODS = new Set(['client_secret_basic', 'client_secret_post', 'client_secret_jwt']);

/**
 * Validates a fetched client metadata document before anything of it is kept: its
 * `client_id` equals the URL it was fetched from, it declares no shared-secret
 * authentication method, every `redirect_uris` entry is a redirect URI the broker would
 * send a browser to (`isRedirectUri`: no `javascript:`, `data:`, `file:`…), and a
 * `logo_uri` is https (http only on loopback). A third party writes this document, so a
 * single bad entry refuses the whole document. Throws `CimdFetchError`.
 */
export function validateClientMetadata(url: string, document: Readonly<Record<string, unknown>>): ClientMetadata {
  if (document.client_id !== url) throw new CimdFetchError('the client metadata document names another client_id');
  const method = document.token_endpoint_auth_method;
  if (typeof method === 'string' && SHARED_SECRET_METHODS.has(method))
    throw new CimdFetchError('the client metadata document declares a shared-secret authentication method');
  const redirectUris = document.redirect_uris ?? [];
  if (
    !Array.isArray(redirectUris) ||
    !redirectUris.every((uri): uri is string => typeof uri === 'string' && isRedirectUri(uri))
  ) {
    throw new CimdFetchError(
      'the client metadata document lists a redirect_uri that is not https, loopback http or a private-use scheme',
    );
  }
  const logoUri = document.logo_uri ?? null;
  if (logoUri !== null && (typeof logoUri !== 'string' || !isHttpsOrLoopbackUrl(logoUri)))
    throw new CimdFetchError('the client metadata document has a logo_uri that is not an https URL');
  return { redirectUris: [...redirectUris], logoUri };
}
