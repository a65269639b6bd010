import { OAuthError } from '@broker/domain';
import type { TokenForm } from './token-form';

/** The client credentials a token request presented (RFC 6749 §2.3.1). */
export interface PresentedClient {
  readonly clientId: string | undefined;
  readonly clientSecret: string | undefined;
  readonly method: 'client_secret_basic' | 'client_secret_post' | 'none';
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/**
 * Reads the client's credentials from HTTP Basic (id and secret form-encoded first) or
 * from the body; using both at once is `invalid_request` (RFC 6749 §2.3).
 */
export function presentedClient(authorization: string | undefined, form: TokenForm): PresentedClient {
  const bodySecret = form.get('client_secret');
  if (authorization !== undefined && /^basic /i.test(authorization)) {
    if (bodySecret !== undefined)
      throw new OAuthError('invalid_request', 'use one client authentication method, not two');
    let decoded: string;
    try {
      decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    } catch {
      throw new OAuthError('invalid_client', 'malformed Basic credentials');
    }
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials');
    let clientId: string;
    let clientSecret: string;
    try {
      clientId = formDecode(decoded.slice(0, colon));
      clientSecret = formDecode(decoded.slice(colon + 1));
    } catch {
      throw new OAuthError('invalid_client', 'malformed Basic credentials');
    }
    const bodyId = form.get('client_id');
    if (bodyId !== undefined && bodyId !== clientId)
      throw new OAuthError('invalid_request', 'client_id differs from the authenticated client');
    return { clientId, clientSecret, method: 'client_secret_basic' };
  }
  return {
    clientId: form.get('client_id'),
    clientSecret: bodySecret,
    method: bodySecret === undefined ? 'none' : 'client_secret_post',
  };
}
