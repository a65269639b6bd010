import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { JweCodec } from '@broker/vault';
import {
  ApiClient,
  FrozenClock,
  http,
  startTestBroker,
  testBackends,
  testKey,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type RegistryFixture } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

const REDIRECT = 'https://agent.example.com/cb';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

interface Answered {
  decision: string;
  answered_at: string;
}

/**
 * An authorization session (the consent link of `/oauth2/authorize`) is answered once: after
 * Allow or Deny the same `session_token` gets 409 `session_used` naming what was decided,
 * never a second `redirect_url` (so never a second code) and never a second decision; the
 * consent view still reads it, marked `answered`. Concurrent answers, on one process or two
 * replicas of one PostgreSQL, have exactly one winner.
 */
describe.each(testBackends())('a consent link is answered once on $name', (backend) => {
  const clock = new FrozenClock('2026-06-01T12:00:00.000Z');
  let broker: TestBroker;
  let storage: Record<string, unknown>;
  const jweKeys = [{ id: 'jwe-1', key: testKey() }];
  const encryption = { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' };
  let base: string;
  let reg: RegistryFixture;

  beforeAll(async () => {
    storage = await backend.storage();
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      clock,
      config: { storage, encryption, third_party_oauth2: { jwe_keys: jweKeys } },
    });
    base = broker.url('enduser');
    reg = await createRegistry(new ApiClient(broker.url('admin')));
  });

  afterAll(async () => {
    await broker?.stop();
  });

  let people = 0;
  /** A principal with no grant yet, so `/oauth2/authorize` sends them to the consent page. */
  const someone = (): ApiClient => new ApiClient(base, `person-${(people += 1)}@example.com`);

  /** The agent's authorization request as the person's browser sends it; the consent link's session token. */
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
    const location = new URL(response.headers.location as string);
    expect(location.pathname).toBe(`/agents/${reg.agent}`);
    return location.searchParams.get('session_token') as string;
  }

  const allow = (
    person: ApiClient,
    token: string,
    sets: Record<string, string[]> = { [reg.readMail]: [reg.mail, reg.files] },
  ): Promise<HttpResponse> =>
    person.post(`/api/consent/agents/${reg.agent}/grants?session_token=${encodeURIComponent(token)}`, {
      granted_permission_sets: sets,
    });
  const deny = (person: ApiClient, token: string): Promise<HttpResponse> =>
    person.post(`/api/consent/agents/${reg.agent}/deny?session_token=${encodeURIComponent(token)}`);
  const detail = (person: ApiClient, token: string): Promise<HttpResponse> =>
    person.get(`/api/consent/agents/${reg.agent}?session_token=${encodeURIComponent(token)}`);
  const grants = async (person: ApiClient): Promise<{ granted_permission_sets: Record<string, string[]> }[]> =>
    (await person.get(`/api/consent/agents/${reg.agent}/grants`)).json<{
      data: { granted_permission_sets: Record<string, string[]> }[];
    }>().data;
  const answeredOf = async (person: ApiClient, token: string): Promise<Answered | undefined> => {
    const response = await detail(person, token);
    expect(response.status, response.text).toBe(200);
    return response.json<{ data: { authorization_context: { answered?: Answered } } }>().data.authorization_context
      .answered;
  };

  function expectUsed(response: HttpResponse, decision: 'allowed' | 'denied'): void {
    expect(response.status, response.text).toBe(409);
    const body = response.json<{ error: string; message: string }>();
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.error).toBe('session_used');
    expect(body.message).toContain(decision);
    expect(response.text).not.toContain('redirect_url');
    expect(response.text).not.toContain(REDIRECT);
  }

  it('Allow twice with one session token: the second is 409 session_used, with no redirect_url and no change to the grant', async () => {
    const person = someone();
    const token = await consentLink(person);
    const first = await allow(person, token);
    expect(first.status, first.text).toBe(201);
    expect(first.json<{ redirect_url: string }>().redirect_url).toContain('/oauth2/authorize?');

    const second = await allow(person, token, { [reg.allFiles]: [reg.files] });
    expectUsed(second, 'allowed');
    // The second body was not written: the grant is the first decision's.
    expect((await grants(person)).map((g) => Object.keys(g.granted_permission_sets))).toEqual([[reg.readMail]]);
    // Nor can the answered link decline it afterwards.
    expectUsed(await deny(person, token), 'allowed');
  });

  it('Deny then Allow: the Allow is refused and no grant is written', async () => {
    const person = someone();
    const token = await consentLink(person);
    const denied = await deny(person, token);
    expect(denied.status, denied.text).toBe(200);
    expect(denied.json<{ data: { redirect_url: string } }>().data.redirect_url).toMatch(
      /^https:\/\/agent\.example\.com\/cb\?error=access_denied/,
    );

    expectUsed(await allow(person, token), 'denied');
    expect(await grants(person)).toEqual([]);
    // Deny again: no second redirect either.
    expectUsed(await deny(person, token), 'denied');
  });

  it("Deny is in the person's activity as consent.denied, once, naming no state, redirect or session token", async () => {
    const person = someone();
    const token = await consentLink(person, 'st-secret-state');
    const denied = await deny(person, token);
    expect(denied.status, denied.text).toBe(200);
    // Written with the answer: readable as soon as the API answered.
    const activity = async () =>
      (await person.get('/api/activity?type=consent.denied')).json<{
        data: {
          type: string;
          agent_id: string;
          actor: { type: string };
          outcome: string;
          details: Record<string, unknown>;
        }[];
      }>().data;
    const [event, ...more] = await activity();
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      type: 'consent.denied',
      agent_id: reg.agent,
      actor: { type: 'principal' },
      outcome: 'success',
      details: { resources: [] },
    });
    const text = JSON.stringify(event);
    for (const secret of [token, 'st-secret-state', REDIRECT, CHALLENGE]) expect(text).not.toContain(secret);
    // A second answer (409) records nothing.
    expectUsed(await deny(person, token), 'denied');
    expect(await activity()).toHaveLength(1);
  });

  it('lets exactly one of many concurrent Allows win; the rest are 409 with no redirect_url', async () => {
    const person = someone();
    const token = await consentLink(person);
    const answers = await Promise.all(Array.from({ length: 6 }, () => allow(person, token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(answers.filter((a) => a.text.includes('redirect_url'))).toHaveLength(1);
  });

  it('lets exactly one of a concurrent Allow and Deny win', async () => {
    const person = someone();
    const token = await consentLink(person);
    const [allowed, denied] = await Promise.all([allow(person, token), deny(person, token)]);
    expect([allowed.status, denied.status].sort()).toEqual(allowed.status === 201 ? [201, 409] : [200, 409]);
    expect(await grants(person)).toHaveLength(allowed.status === 201 ? 1 : 0);
  });

  it('shows a used session as answered (decision and time) in the consent view; a pending one has no answer', async () => {
    const person = someone();
    const allowedToken = await consentLink(person, 'st-a');
    expect(await answeredOf(person, allowedToken)).toBeUndefined();
    expect((await allow(person, allowedToken)).status).toBe(201);
    expect(await answeredOf(person, allowedToken)).toEqual({
      decision: 'allowed',
      answered_at: clock.now().toISOString(),
    });

    const other = someone();
    const deniedToken = await consentLink(other, 'st-d');
    clock.advance(5_000);
    expect((await deny(other, deniedToken)).status).toBe(200);
    expect(await answeredOf(other, deniedToken)).toEqual({
      decision: 'denied',
      answered_at: clock.now().toISOString(),
    });
    // The answer is the session's own: another person's link is still refused as theirs.
    expect((await detail(person, deniedToken)).status).toBe(403);
  });

  it('refuses a session token issued before sessions were single-use (no jti) as expired', async () => {
    const person = someone();
    const config = broker.broker.server('enduser').app.get<BrokerConfig>(BROKER_CONFIG);
    const legacy = await new JweCodec(config.third_party_oauth2.jwe_keys, 'authorization session', clock).seal(
      {
        sub: person.principal as string,
        agent_id: reg.agent,
        original_url: `${base}/oauth2/authorize?client_id=${reg.agent}&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT)}&state=s&code_challenge=${CHALLENGE}&code_challenge_method=S256`,
      },
      600,
    );
    for (const response of [await allow(person, legacy), await deny(person, legacy), await detail(person, legacy)]) {
      expect(response.status, response.text).toBe(400);
      expect(response.json<{ error: string }>().error).toBe('session_expired');
    }
    expect(await grants(person)).toEqual([]);
  });

  it('across two replicas of one database: concurrent Allows on both have exactly one winner', async () => {
    const replica = await startTestBroker({
      servers: BOTH_SERVERS,
      clock,
      config: { storage, encryption, third_party_oauth2: { jwe_keys: jweKeys } },
    });
    try {
      const person = someone();
      const token = await consentLink(person);
      const other = new ApiClient(replica.url('enduser'), person.principal);
      const answers = await Promise.all([
        allow(person, token),
        allow(other, token),
        allow(person, token),
        allow(other, token),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409]);
      // Either replica reads it as answered.
      expect(await answeredOf(other, token)).toMatchObject({ decision: 'allowed' });
    } finally {
      await replica.stop();
    }
  });
});
