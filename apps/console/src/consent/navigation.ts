/**
 * Whether a redirect the broker answered may be followed with a full navigation: the client's
 * registered redirect_uri (https, loopback http or a native app's private scheme), never a
 * scheme that runs or embeds content in this page.
 */
export function isNavigable(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return !['javascript:', 'data:', 'vbscript:', 'blob:', 'file:'].includes(parsed.protocol);
}

/** Leaves the console for the client's redirect_uri (a full navigation, the authorization request resumes there). */
export function leaveFor(url: string): boolean {
  if (!isNavigable(url)) return false;
  window.location.assign(url);
  return true;
}

/** Where Connect sends the browser: the broker's third-party authorize route, coming back to this consent page (with its request). */
export function connectServiceUrl(serviceId: string, agentId: string, sessionToken: string | null): string {
  const base = (import.meta.env.VITE_BROKER_URL as string | undefined) ?? '';
  const back = new URL(`/agents/${encodeURIComponent(agentId)}`, window.location.origin);
  if (sessionToken !== null) back.searchParams.set('session_token', sessionToken);
  return `${base}/api/third-party/${encodeURIComponent(serviceId)}/oauth2/authorize?redirect_uri=${encodeURIComponent(back.href)}`;
}

/** The host an authorization request returns to (its redirect_uri), shown before the person decides. */
export function returnHost(originalUrl: string | undefined): string | null {
  if (originalUrl === undefined) return null;
  try {
    const redirect = new URL(originalUrl).searchParams.get('redirect_uri');
    if (redirect === null) return null;
    const target = new URL(redirect);
    return target.host.length > 0 ? target.host : target.protocol.replace(/:$/, '');
  } catch {
    return null;
  }
}

/** The scopes an authorization request names (RFC 6749 §3.3, space-delimited), or undefined when it names none. */
export function requestedScopes(originalUrl: string | undefined): ReadonlySet<string> | undefined {
  if (originalUrl === undefined) return undefined;
  try {
    const scopes = (new URL(originalUrl).searchParams.get('scope') ?? '').split(' ').filter((s) => s.length > 0);
    return scopes.length > 0 ? new Set(scopes) : undefined;
  } catch {
    return undefined;
  }
}
