import {
  ApiClient,
  completeAuthorization,
  http,
  startThirdPartyProvider,
  type HttpResponse,
  type TestBroker,
  type ThirdPartyProvider,
} from '@broker/testing';
import { expect } from 'vitest';

/** The protected resource the "Mail" service's tokens are for. */
export const MAIL_RESOURCE = 'https://mail.example.com';

/** oidc-provider registered as the third-party service "Mail", a permission set of it and an agent holding the set. */
export interface MailService {
  readonly provider: ThirdPartyProvider;
  /** The service's id. */
  readonly service: string;
  /** The permission set's id (Mail's `mail.read`). */
  readonly set: string;
  /** The agent's id. */
  readonly agent: string;
}

/**
 * Registers a test provider as the service "Mail" (scope `mail.read` for {@link MAIL_RESOURCE}) on the
 * admin server, with a permission set "Mail" and an agent "Agent" assigned it. The callback URL
 * (under `base`, the end-user server's public URL) contains the service id: the service is registered
 * with placeholder endpoints first, the provider learns the URL after, then the service is pointed at
 * it (discovered from its issuer; the broker must allow loopback discovery). `beforeFirstRequest`
 * sees the provider before the broker's discovery reaches it: oidc-provider composes its middleware
 * at its first request, so that is where a test adds its own.
 */
export async function registerMailService(
  admin: ApiClient,
  base: string,
  beforeFirstRequest?: (provider: ThirdPartyProvider) => void,
): Promise<MailService> {
  const placeholder = 'https://placeholder.example.com';
  const service = (
    await admin.post('/api/services', {
      display_name: 'Mail',
      client_id: 'x',
      client_secret: 'x',
      issuer_uri: placeholder,
      authorization_endpoint: `${placeholder}/a`,
      token_endpoint: `${placeholder}/t`,
      protected_resources: [MAIL_RESOURCE],
    })
  ).json<{ id: string }>().id;
  const provider = await startThirdPartyProvider({
    redirectUris: [`${base}/api/third-party/${service}/oauth2/callback`],
    scopes: ['mail.read'],
  });
  try {
    beforeFirstRequest?.(provider);
    const pointed = await admin.put(`/api/services/${service}`, {
      display_name: 'Mail',
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
      issuer_uri: provider.issuer,
      protected_resources: [MAIL_RESOURCE],
    });
    expect(pointed.status, pointed.text).toBe(200);
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const agent = (
      await admin.post('/api/agents', { display_name: 'Agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    return { provider, service, set, agent };
  } catch (error) {
    await provider.stop();
    throw error;
  }
}

/** The person allows the agent Mail's permission set (POST grants); the answer, for the caller to check. */
export function grantMail(base: string, person: string, mail: MailService): Promise<HttpResponse> {
  return new ApiClient(base, person).post(`/api/consent/agents/${mail.agent}/grants`, {
    granted_permission_sets: { [mail.set]: [mail.service] },
  });
}

/**
 * The whole connect flow for `person` (a reconnect when a session exists): the broker's authorize
 * redirect, the provider's login and consent as `login`, then the callback, which must answer with
 * `success=true`. `onCallback` sees the callback URL (its authorization code) before the broker does.
 */
export async function connectThirdParty(
  base: string,
  person: string,
  service: string,
  options: { login?: string; onCallback?: (callback: string) => void } = {},
): Promise<HttpResponse> {
  const start = await new ApiClient(base, person).get(
    `/api/third-party/${service}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${base}/done`)}`,
  );
  const callback = await completeAuthorization(
    start.headers.location as string,
    `${base}/api/third-party/${service}/oauth2/callback`,
    options.login,
  );
  options.onCallback?.(callback);
  const answer = await http(callback, { headers: { 'x-remote-user': person } });
  expect(answer.headers.location).toContain('success=true');
  return answer;
}

/**
 * Makes `person`'s stored access token for `service` expired (a minute ago), so its next use refreshes it.
 * Served from memory on PostgreSQL: the next request must see this write (docs/oauth2.md "The hot path").
 */
export async function expireAccessToken(broker: TestBroker, person: string, service: string): Promise<void> {
  await broker.broker.runtime.database.dataSource.query(
    "UPDATE third_party_sessions SET access_token_expires_at = now() - interval '1 minute' WHERE principal = $1 AND service_id = $2",
    [person, service],
  );
  await broker.broker.runtime.database.settleNotifications();
}

/** Uses `refreshToken` at the provider behind the broker's back (the provider rotates it away): must answer 200. */
export async function useRefreshTokenElsewhere(provider: ThirdPartyProvider, refreshToken: string): Promise<void> {
  const used = await fetch(`${provider.issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${provider.clientId}:${provider.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });
  expect(used.status).toBe(200);
}
