import { ServiceRepository, SessionRepository } from '@broker/persistence';
import { ApiClient, completeAuthorization, freePort, http, startTestBroker, startThirdPartyProvider, type TestBroker, type ThirdPartyProvider } from '@broker/testing';
import { bindings, EnvelopeCipher, TokenVault } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from './support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

describe('third-party connections', () => {
  let broker: TestBroker;
  let provider: ThirdPartyProvider;
  let admin: ApiClient;
  let alice: ApiClient;
  let publicUrl: string;
  let serviceId: string;
  let otherServiceId: string;

  beforeAll(async () => {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { server: { enduser: { port, public_url: publicUrl, consent_ui_url: 'https://consent.example.com' } } } });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(publicUrl, ALICE);
    // The callback URL contains the service id, so the service is registered first and the provider learns it after.
    const placeholder = 'https://placeholder.example.com';
    serviceId = (await admin.post('/api/services', { display_name: 'Mail', client_id: 'pending', client_secret: 'pending', issuer_uri: placeholder, authorization_endpoint: `${placeholder}/a`, token_endpoint: `${placeholder}/t`, scopes: [{ scope: 'mail.read', description: 'Read mail' }], protected_resources: ['https://mail.example.com/api'] })).json<{ id: string }>().id;
    otherServiceId = (await admin.post('/api/services', { display_name: 'Files', client_id: 'files', issuer_uri: placeholder, authorization_endpoint: `${placeholder}/a`, token_endpoint: `${placeholder}/t`, protected_resources: ['https://files.example.com/api'] })).json<{ id: string }>().id;
    provider = await startThirdPartyProvider({ redirectUris: [`${publicUrl}/api/third-party/${serviceId}/oauth2/callback`], scopes: ['mail.read', 'mail.send'] });
    const put = await admin.put(`/api/services/${serviceId}`, { display_name: 'Mail', client_id: provider.clientId, client_secret: provider.clientSecret, issuer_uri: provider.issuer, scopes: [{ scope: 'mail.read', description: 'Read mail' }], protected_resources: ['https://mail.example.com/api'] });
    expect(put.status).toBe(200);
    const set = (await admin.post('/api/permission-sets', { name: 'Mail', service_scopes: [{ service_id: serviceId, scopes: ['mail.send', 'mail.read'] }] })).json<{ id: string }>().id;
    const agent = (await admin.post('/api/agents', { display_name: 'Mail Agent', permission_sets: [{ permission_set_id: set }] })).json<{ id: string }>().id;
    await alice.post(`/api/consent/agents/${agent}/grants`, { granted_permission_sets: { [set]: [serviceId] } });
  });

  afterAll(async () => {
    await broker.stop();
    await provider.stop();
  });

  /** Runs the whole connect flow for `client`; returns the broker's final redirect. */
  async function connect(client: ApiClient, redirectUri = `${publicUrl}/done`): Promise<string> {
    const start = await client.get(`/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(redirectUri)}`);
    expect(start.status).toBe(302);
    const callback = await completeAuthorization(start.headers.location as string, `${publicUrl}/api/third-party/${serviceId}/oauth2/callback`);
    const finish = await http(callback, { headers: { 'x-remote-user': client.principal as string } });
    expect(finish.status).toBe(302);
    return finish.headers.location as string;
  }

  it('connects end to end: PKCE authorize, provider login and consent, callback, tokens sealed', async () => {
    const start = await alice.get(`/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${publicUrl}/done`)}`);
    expect(start.status).toBe(302);
    const location = new URL(start.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${provider.issuer}/auth`);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: provider.clientId,
      redirect_uri: `${publicUrl}/api/third-party/${serviceId}/oauth2/callback`,
      scope: 'mail.read mail.send',
      code_challenge_method: 'S256',
    });
    expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get('state')?.split('.')).toHaveLength(5);

    expect(await connect(alice)).toBe(`${publicUrl}/done?success=true&service_id=${serviceId}`);
    const vault = broker.broker.server('enduser').app.get(TokenVault);
    const token = await vault.getUsableToken(ALICE, serviceId);
    expect(token.accessToken.length).toBeGreaterThan(10);
    expect(token.tokenType).toBe('Bearer');
  });
});
