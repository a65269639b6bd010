import { ApiClient, completeAuthorization, freePort, http, startJwtIssuer, startTestBroker, startThirdPartyProvider, type TestBroker, type TestJwtIssuer, type ThirdPartyProvider } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from './support/servers';

const ALICE = 'alice@example.com';

describe('token exchange with an expired third-party access token', () => {
  let issuer: TestJwtIssuer;
  let provider: ThirdPartyProvider;
  let broker: TestBroker;
  let base: string;
  let agent: string;
  let service: string;

  beforeAll(async () => {
    issuer = await startJwtIssuer('RS256');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { server: { enduser: { port, public_url: base } }, token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } } } });
    const admin = new ApiClient(broker.url('admin'));
    const p = 'https://placeholder.example.com';
    service = (await admin.post('/api/services', { display_name: 'Mail', client_id: 'x', client_secret: 'x', issuer_uri: p, authorization_endpoint: `${p}/a`, token_endpoint: `${p}/t`, protected_resources: ['https://mail.example.com'] })).json<{ id: string }>().id;
    provider = await startThirdPartyProvider({ redirectUris: [`${base}/api/third-party/${service}/oauth2/callback`], scopes: ['mail.read'] });
    await admin.put(`/api/services/${service}`, { display_name: 'Mail', client_id: provider.clientId, client_secret: provider.clientSecret, issuer_uri: provider.issuer, protected_resources: ['https://mail.example.com'] });
    const set = (await admin.post('/api/permission-sets', { name: 'Mail', service_scopes: [{ service_id: service, scopes: ['mail.read'] }] })).json<{ id: string }>().id;
    agent = (await admin.post('/api/agents', { display_name: 'Agent', permission_sets: [{ permission_set_id: set }] })).json<{ id: string }>().id;
    const alice = new ApiClient(base, ALICE);
    await alice.post(`/api/consent/agents/${agent}/grants`, { granted_permission_sets: { [set]: [service] } });
    const start = await alice.get(`/api/third-party/${service}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${base}/done`)}`);
    const callback = await completeAuthorization(start.headers.location as string, `${base}/api/third-party/${service}/oauth2/callback`);
    expect((await http(callback, { headers: { 'x-remote-user': ALICE } })).headers.location).toContain('success=true');
  });

  afterAll(async () => {
    await broker.stop();
    await provider.stop();
    await issuer.stop();
  });

  it('refreshes it transparently (one provider refresh) and returns the new token; no token reaches the log', async () => {
    const exchange = async (): Promise<{ status: number; body: { access_token: string }; fields: Record<string, string> }> => {
      const fields = {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: await issuer.sign({ sub: 'gateway' }, { audience: base }),
        subject_token: await issuer.sign({ sub: ALICE, azp: agent }),
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: 'https://mail.example.com',
      };
      const response = await http(`${base}/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
      return { status: response.status, body: response.json(), fields };
    };
    const before = await exchange();
    expect(before.status).toBe(200);
    await broker.broker.runtime.database.dataSource.query("UPDATE third_party_sessions SET access_token_expires_at = now() - interval '1 minute'");
    const refreshes = provider.refreshes();
    const after = await exchange();
    expect(after.status).toBe(200);
    expect(provider.refreshes()).toBe(refreshes + 1);
    expect(after.body.access_token).not.toBe(before.body.access_token);
    // The refreshed token is now served without another refresh.
    expect((await exchange()).body.access_token).toBe(after.body.access_token);
    expect(provider.refreshes()).toBe(refreshes + 1);
    expect(broker.logs.leaked([before.body.access_token, after.body.access_token, after.fields.client_assertion as string, after.fields.subject_token as string, provider.clientSecret])).toEqual([]);
  });
});
