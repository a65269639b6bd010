import type { KoaContextWithOIDC } from 'oidc-provider';
import { startOidcProvider, type TestOidcProvider } from './oidc-provider';

/** oidc-provider playing a third-party service, with counters of what the broker did. */
export interface ThirdPartyProvider extends TestOidcProvider {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Successful refresh-token grants so far. */
  refreshes(): number;
  /** Refresh-token grants the provider refused so far. */
  refusedRefreshes(): number;
}

/**
 * A real OAuth 2.0 provider for one confidential client (the broker): code flow with PKCE
 * required, refresh tokens always issued and rotated on every use (reusing an old one is
 * `invalid_grant`), access tokens living `accessTokenTtl` seconds.
 */
export async function startThirdPartyProvider(options: {
  redirectUris: string[];
  scopes: string[];
  accessTokenTtl?: number;
}): Promise<ThirdPartyProvider> {
  const clientId = 'broker-at-provider';
  const clientSecret = 'provider-client-secret-4d2c9e1f0b7a';
  let refreshes = 0;
  let refused = 0;
  const base = await startOidcProvider({
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    configuration: {
      scopes: ['openid', 'offline_access', ...options.scopes],
      pkce: { required: () => true },
      issueRefreshToken: () => true,
      rotateRefreshToken: true,
      ttl: {
        AccessToken: options.accessTokenTtl ?? 3600,
        RefreshToken: 86_400,
        Grant: 86_400,
        Session: 3600,
        Interaction: 600,
      },
      findAccount: (_ctx: unknown, id: string) =>
        Promise.resolve({ accountId: id, claims: () => Promise.resolve({ sub: id }) }),
    },
  });
  base.provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    if (ctx.oidc.params?.grant_type === 'refresh_token') refreshes += 1;
  });
  base.provider.on('grant.error', (ctx: KoaContextWithOIDC) => {
    if (ctx.oidc.params?.grant_type === 'refresh_token') refused += 1;
  });
  return { ...base, clientId, clientSecret, refreshes: () => refreshes, refusedRefreshes: () => refused };
}

/**
 * Plays the user's browser at the provider: follows the authorization URL, signs in and
 * consents through oidc-provider's interaction pages, and returns the redirect back to
 * the broker (with `code`, `state` and `iss`).
 */
export async function completeAuthorization(
  authorizationUrl: string,
  callbackPrefix: string,
  login = 'provider-user',
): Promise<string> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl;
  for (let step = 0; step < 12; step += 1) {
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const index = (pair as string).indexOf('=');
      cookies.set((pair as string).slice(0, index), (pair as string).slice(index + 1));
    }
    const location = response.headers.get('location');
    if (location !== null) {
      const next = new URL(location, url).toString();
      if (next.startsWith(callbackPrefix)) return next;
      url = next;
      continue;
    }
    const html = await response.text();
    const action = /action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error(`unexpected provider page at ${url} (${response.status})`);
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1] ?? 'consent';
    const form =
      prompt === 'login' ? new URLSearchParams({ prompt, login, password: 'any' }) : new URLSearchParams({ prompt });
    const posted = await fetch(new URL(action, url), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      body: form,
    });
    for (const header of posted.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const index = (pair as string).indexOf('=');
      cookies.set((pair as string).slice(0, index), (pair as string).slice(index + 1));
    }
    const after = posted.headers.get('location');
    if (after === null) throw new Error(`the provider did not redirect after ${action} (${posted.status})`);
    url = new URL(after, url).toString();
  }
  throw new Error('the provider authorization did not complete');
}
