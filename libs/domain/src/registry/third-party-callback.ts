/**
 * The broker's redirect URI at a third-party service (RFC 6749 §3.1.2): where the provider sends the person back
 * after they connect their account. The admin registers exactly this URL as the broker's client redirect URI at the
 * provider; the connect flow sends it as `redirect_uri` and again at the code exchange.
 */
export function thirdPartyCallbackUrl(enduserPublicUrl: string, serviceId: string): string {
  return `${enduserPublicUrl}/api/third-party/${serviceId}/oauth2/callback`;
}
