import {
  ApiClient,
  FrozenClock,
  http,
  startTestBroker,
  testBackends,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type RegistryFixture } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

const REDIRECT = 'https://agent.example.com/cb';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const MINUTE = 60_000;

/**
 * A consent page left open past the request's ten minutes offers the way back to the
 * application: `POST /api/consent/agents/{id}/expired` ends the request at the client's
 * redirect_uri with `error=access_denied`, its `state` (RFC 6749 §4.1.2.1) and `iss` (RFC 9207),
 * for up to an hour after the expiry, once, for the person it was issued to; the expired token
 * still answers nothing else. The consent view says how long the request has left by the
 * broker's clock (`expires_in`).
 */
describe.each(testBackends())('an expired consent request returns to the application on $name', (backend) => {
  const clock = new FrozenClock('2026-06-01T12:00:00.000Z');
  let broker: TestBroker;
  let base: string;
  let reg: RegistryFixture;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, clock, config: { storage: await backend.storage() } });
    base = broker.url('enduser');
    reg = await createRegistry(new ApiClient(broker.url('admin')));
  });

  afterAll(async () => {
    await broker?.stop();
  });

  let people = 0;
  const someone = (): ApiClient => new ApiClient(base, `late-${(people += 1)}@example.com`);

  async function consentLink(person: ApiClient, state = 'st-1'): Promise<string> {
    const url = new URL(`${base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: reg.agent,
      response_type: 'code',
      redirect_uri: REDIRECT,
      state,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const response = await http(url.toString(), { headers: { 'x-remote-user': person.principal as string } });
    expect(response.status, response.text).toBe(302);
    return new URL(response.headers.location as string).searchParams.get('session_token') as string;
  }

  const q = (token: string): string => `session_token=${encodeURIComponent(token)}`;
  const expired = (person: ApiClient, token: string): Promise<HttpResponse> =>
    person.post(`/api/consent/agents/${reg.agent}/expired?${q(token)}`);

  function expectError(response: HttpResponse, status: number, error: string): void {
    expect(response.status, response.text).toBe(status);
    expect(response.json<{ error: string }>().error).toBe(error);
    expect(response.text).not.toContain('redirect_url');
    expect(response.text).not.toContain(REDIRECT);
  }

  it('the consent view counts down by the broker clock: expires_in 600 at first, 240 six minutes later', async () => {
    const person = someone();
    const token = await consentLink(person);
    const read = async (): Promise<number> =>
      (await person.get(`/api/consent/agents/${reg.agent}?${q(token)}`)).json<{
        data: { authorization_context: { expires_in: number } };
      }>().data.authorization_context.expires_in;
    expect(await read()).toBe(600);
    clock.advance(6 * MINUTE);
    expect(await read()).toBe(240);
  });

  it('past its expiry: access_denied with state and iss at the redirect_uri, once; the token answers nothing else', async () => {
    const person = someone();
    const token = await consentLink(person, 'st-late');
    clock.advance(11 * MINUTE);
    // Expired for everything else, as before.
    expectError(await person.get(`/api/consent/agents/${reg.agent}?${q(token)}`), 400, 'session_expired');
    expectError(await person.post(`/api/consent/agents/${reg.agent}/deny?${q(token)}`), 400, 'session_expired');
    expectError(
      await person.post(`/api/consent/agents/${reg.agent}/grants?${q(token)}`, {
        granted_permission_sets: { [reg.readMail]: [reg.mail] },
      }),
      400,
      'session_expired',
    );

    const ended = await expired(person, token);
    expect(ended.status, ended.text).toBe(200);
    const back = new URL(ended.json<{ data: { redirect_url: string } }>().data.redirect_url);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toMatch(/expired/);
    expect(back.searchParams.get('state')).toBe('st-late');
    const metadata = await http(`${base}/.well-known/oauth-authorization-server`);
    expect(back.searchParams.get('iss')).toBe(metadata.json<{ issuer: string }>().issuer);
    expect(back.searchParams.get('code')).toBeNull();

    // Once: no second redirect.
    expectError(await expired(person, token), 409, 'session_used');
  });

  it('a request answered before it expired is not ended again: 409 session_used, no redirect', async () => {
    const person = someone();
    const token = await consentLink(person);
    const denied = await person.post(`/api/consent/agents/${reg.agent}/deny?${q(token)}`);
    expect(denied.status, denied.text).toBe(200);
    clock.advance(30 * MINUTE);
    expectError(await expired(person, token), 409, 'session_used');
  });

  it('more than an hour past its expiry, or never a token: 400 session_expired, nothing sent', async () => {
    const person = someone();
    const token = await consentLink(person);
    clock.advance(10 * MINUTE + 61 * MINUTE);
    expectError(await expired(person, token), 400, 'session_expired');
    expectError(await expired(person, 'not-a-session-token'), 400, 'session_expired');
    expectError(await person.post(`/api/consent/agents/${reg.agent}/expired`), 400, 'session_expired');
  });

  it("another person's request: 403 forbidden, and it can still be ended by its own person", async () => {
    const owner = someone();
    const token = await consentLink(owner);
    clock.advance(11 * MINUTE);
    expectError(await expired(someone(), token), 403, 'forbidden');
    expect((await expired(owner, token)).status).toBe(200);
  });
});
