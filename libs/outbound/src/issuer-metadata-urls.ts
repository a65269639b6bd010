/**
 * Metadata locations of an issuer, in the order tried: RFC 8414 §3.1 (the well-known
 * segment inserted before the issuer's path), then OpenID Connect Discovery 1.0 §4
 * (appended to it).
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}
