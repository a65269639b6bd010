import { LongPollHub } from '@broker/approvals';
import {
  ApiClient,
  eventually,
  http,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
} from '@broker/testing';
import { AuthorizationRequestRepository } from '@broker/persistence';
import { TokenVault } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThirdParty, registerMailService, type MailService } from '../support/mail-service';
import { AuthorizationRequestExpiry } from '../../apps/user-api/src/authorization-requests/authorization-request-expiry';
import { BOTH_SERVERS } from '../support/servers';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NOT_DELEGATED = 'no active grant delegates this service to the agent';
const NO_SESSION = 'the user has no usable session with the service: reconnect it';

interface Member {
  id: string;
  url: string;
  expires_at: string;
  expires_in: number;
}

interface Refusal {
  error: string;
  error_description: string;
  error_uri?: string;
  authorization_request?: Member;
}

interface View {
  id: string;
  status: string;
  step: string;
  agent: { id: string; display_name: string; description: string | null; logo_url: string | null };
  service: { id: string; display_name: string; description: string | null; logo_url: string | null };
  scopes: { scope: string; description: string }[];
  needs_grant: boolean;
  needs_connection: boolean;
  grant_exists: boolean;
  created_at: string;
  expires_at: string;
  expires_in: number;
  answered_at: string | null;
}

interface ActivityItem {
  type: string;
  outcome: string;
  actor: { type: string; id: string | null };
  agent_id: string | null;
  service_id: string | null;
  details: Record<string, unknown>;
}

/** The person's activity of one kind for one request (queued events are written within a second). */
async function activityOf(base: string, person: string, type: string, id: string): Promise<ActivityItem[]> {
  const response = await new ApiClient(base, person).get(`/api/activity?type=${type}&limit=100`);
  expect(response.status, response.text).toBe(200);
  return response
    .json<{ data: ActivityItem[] }>()
    .data.filter((event) => event.details.authorization_request_id === id);
}

const BASE_CONFIG = {
  third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
  token_exchange: { authorization: { cel: { expression: 'client_assertion.sub == "gateway-1"' } } },
};

/** A gateway's view of the broker: exchanges, and the wait on a request. */
function gatewayOf(gateway: GatewayFixture) {
  const exchange = async (person: string, agent: string, scope?: string): Promise<HttpResponse> =>
    (await gateway.exchange(person, agent, { fields: scope === undefined ? {} : { scope } })).response;
  const refused = async (person: string, agent: string, scope?: string): Promise<Refusal> => {
    const response = await exchange(person, agent, scope);
    expect(response.status, response.text).toBeGreaterThanOrEqual(400);
    return response.json<Refusal>();
  };
  const state = async (id: string, headers: Record<string, string> = {}, sub = 'gateway-1'): Promise<HttpResponse> =>
    http(`${gateway.base}/api/authorization-requests/${id}/state`, {
      headers: { 'x-client-assertion': await gateway.assertion({ sub }), ...headers },
    });
  return { exchange, refused, state };
}

// The exchange's context is cached on PostgreSQL until a change is announced: the retry after Allow is checked on both.
describe.each(testBackends())(
  'authorization requests on $name: a refused exchange, the person answers, the gateway retries',
  (backend) => {
    let gateway: GatewayFixture;
    let base: string;
    let mail: MailService;
    let admin: ApiClient;
    /** An agent holding Mail (mail.read) and Mail send (mail.send). */
    let writer: string;
    let sendSet: string;
    let g: ReturnType<typeof gatewayOf>;

    beforeAll(async () => {
      gateway = await startGatewayFixture({ servers: BOTH_SERVERS, backend, config: BASE_CONFIG });
      base = gateway.base;
      admin = new ApiClient(gateway.broker.url('admin'));
      mail = await registerMailService(admin, base);
      sendSet = (
        await admin.post('/api/permission-sets', {
          name: 'Mail send',
          service_scopes: [{ service_id: mail.service, scopes: ['mail.send'] }],
        })
      ).json<{ id: string }>().id;
      writer = (
        await admin.post('/api/agents', {
          display_name: 'Writer',
          description: 'Drafts and sends mail',
          permission_sets: [{ permission_set_id: mail.set }, { permission_set_id: sendSet }],
        })
      ).json<{ id: string }>().id;
      g = gatewayOf(gateway);
    }, 60_000);

    afterAll(async () => {
      await gateway?.stop();
      await mail?.provider.stop();
    });

    const person = (name: string) => new ApiClient(base, name);
    const view = async (name: string, id: string): Promise<View> => {
      const response = await person(name).get(`/api/authorization-requests/${id}`);
      expect(response.status, response.text).toBe(200);
      return response.json<{ data: View }>().data;
    };

    it('no grant: 403 access_denied with a link; the same link again while pending; Allow completes; the retry succeeds', async () => {
      const bob = 'bob@example.com';
      await connectThirdParty(base, bob, mail.service);
      const first = await g.refused(bob, mail.agent);
      expect(first).toMatchObject({ error: 'access_denied', error_description: NOT_DELEGATED });
      const member = first.authorization_request as Member;
      expect(member.id).toMatch(UUID_V4);
      expect(member.url).toBe(`${base}/authorization-requests/${member.id}`);
      expect(member.expires_in).toBeGreaterThan(590);
      expect(member.expires_in).toBeLessThanOrEqual(600);
      expect(Object.keys(member).sort()).toEqual(['expires_at', 'expires_in', 'id', 'url']);

      const again = await g.refused(bob, mail.agent);
      expect(again.authorization_request).toMatchObject({
        id: member.id,
        url: member.url,
        expires_at: member.expires_at,
      });

      const shown = await view(bob, member.id);
      expect(shown).toMatchObject({
        id: member.id,
        status: 'pending',
        step: 'consent',
        agent: { id: mail.agent, display_name: 'Agent', description: null, logo_url: null },
        service: { id: mail.service, display_name: 'Mail' },
        scopes: [{ scope: 'mail.read', description: 'mail.read' }],
        needs_grant: true,
        needs_connection: false,
        grant_exists: false,
        expires_at: member.expires_at,
        answered_at: null,
      });

      const pending = await g.state(member.id);
      expect(pending.status).toBe(200);
      expect(pending.headers.etag).toBe('"pending"');
      expect(pending.json()).toEqual({
        data: {
          id: member.id,
          status: 'pending',
          principal: bob,
          agent_id: mail.agent,
          service_id: mail.service,
          scopes: [],
          created_at: shown.created_at,
          expires_at: member.expires_at,
          answered_at: null,
        },
      });

      const allowed = await person(bob).post(`/api/authorization-requests/${member.id}/allow`, {});
      expect(allowed.status, allowed.text).toBe(200);
      const done = allowed.json<{ data: View }>().data;
      expect(done).toMatchObject({ status: 'completed', step: 'done', grant_exists: true });
      expect(done.answered_at).not.toBeNull();

      const grants = (await person(bob).get(`/api/consent/agents/${mail.agent}/grants`)).json<{
        data: { valid_until: string | null }[];
      }>().data;
      expect(grants).toHaveLength(1);
      expect(grants[0]?.valid_until).toBeNull();

      const completed = await g.state(member.id, { 'if-none-match': '"pending"' });
      expect(completed.status).toBe(200);
      expect(completed.headers.etag).toBe('"completed"');
      expect(completed.json<{ data: { status: string } }>().data.status).toBe('completed');
      // The final state held already: 304 at once (it never changes again).
      const unchanged = await g.state(member.id, { 'if-none-match': '"completed"', 'x-long-poll-timeout': '120' });
      expect(unchanged.status).toBe(304);
      expect(unchanged.headers.etag).toBe('"completed"');
      const retried = await g.exchange(bob, mail.agent);
      expect(retried.status, retried.text).toBe(200);

      const twice = await person(bob).post(`/api/authorization-requests/${member.id}/allow`, {});
      expect(twice.status).toBe(409);
      expect(twice.json()).toEqual({ error: 'conflict', message: expect.stringContaining('completed') as string });
      const denyAfter = await person(bob).post(`/api/authorization-requests/${member.id}/deny`);
      expect(denyAfter.status).toBe(409);
    });

    it('uses the valid_until Allow sends when no grant exists yet', async () => {
      const ivy = 'ivy@example.com';
      await connectThirdParty(base, ivy, mail.service);
      const id = (await g.refused(ivy, mail.agent)).authorization_request?.id as string;
      const until = new Date(Date.now() + 7 * 86_400_000).toISOString();
      const allowed = await person(ivy).post(`/api/authorization-requests/${id}/allow`, { valid_until: until });
      expect(allowed.status, allowed.text).toBe(200);
      const grants = (await person(ivy).get(`/api/consent/agents/${mail.agent}/grants`)).json<{
        data: { valid_until: string | null }[];
      }>().data;
      expect(grants[0]?.valid_until).toBe(until);
    });

    it('a grant lacking a requested scope a permission set offers: 403 with a link; Allow extends the grant', async () => {
      const dan = 'dan@example.com';
      await connectThirdParty(base, dan, mail.service);
      const until = new Date(Date.now() + 30 * 86_400_000).toISOString();
      const granted = await person(dan).post(`/api/consent/agents/${writer}/grants`, {
        granted_permission_sets: { [mail.set]: [mail.service] },
        valid_until: until,
      });
      expect(granted.status, granted.text).toBe(201);
      expect((await g.exchange(dan, writer, 'mail.read')).status).toBe(200);
      // A scope no permission set of the agent offers: no person could grant it, so it is not checked.
      expect((await g.exchange(dan, writer, 'calendar.read')).status).toBe(200);

      const refusal = await g.refused(dan, writer, 'mail.send mail.read');
      expect(refusal).toMatchObject({
        error: 'access_denied',
        error_description: 'the grant does not delegate the requested scopes',
      });
      const id = refusal.authorization_request?.id as string;
      // The same scopes in another order are the same request.
      expect((await g.refused(dan, writer, 'mail.read mail.send')).authorization_request?.id).toBe(id);
      expect((await g.state(id)).json<{ data: { scopes: string[] } }>().data.scopes).toEqual([
        'mail.read',
        'mail.send',
      ]);

      expect(await view(dan, id)).toMatchObject({
        step: 'consent',
        agent: { display_name: 'Writer', description: 'Drafts and sends mail' },
        scopes: [
          { scope: 'mail.read', description: 'mail.read' },
          { scope: 'mail.send', description: 'mail.send' },
        ],
        needs_grant: true,
        needs_connection: false,
        grant_exists: true,
      });
      const allowed = await person(dan).post(`/api/authorization-requests/${id}/allow`, {
        valid_until: new Date(Date.now() + 86_400_000).toISOString(),
      });
      expect(allowed.json<{ data: View }>().data.status).toBe('completed');
      const grant = (await person(dan).get(`/api/consent/agents/${writer}/grants`)).json<{
        data: { valid_until: string | null; granted_permission_sets: Record<string, string[]> }[];
      }>().data[0];
      // The existing grant is extended and keeps its own end.
      expect(grant?.valid_until).toBe(until);
      expect(grant?.granted_permission_sets).toEqual({ [mail.set]: [mail.service], [sendSet]: [mail.service] });
      expect((await g.exchange(dan, writer, 'mail.send mail.read')).status).toBe(200);
    });

    it('no connection: 400 invalid_grant keeps error_uri and adds the link; Allow asks to connect; connecting completes it', async () => {
      const carol = 'carol@example.com';
      const granted = await person(carol).post(`/api/consent/agents/${mail.agent}/grants`, {
        granted_permission_sets: { [mail.set]: [mail.service] },
      });
      expect(granted.status).toBe(201);
      const response = await g.exchange(carol, mail.agent);
      expect(response.status).toBe(400);
      const refusal = response.json<Refusal>();
      expect(refusal).toMatchObject({
        error: 'invalid_grant',
        error_description: NO_SESSION,
        error_uri: `${base}/api/third-party/${mail.service}/oauth2/authorize`,
      });
      const id = refusal.authorization_request?.id as string;
      expect(id).toMatch(UUID_V4);
      expect(await view(carol, id)).toMatchObject({
        status: 'pending',
        step: 'connect',
        needs_grant: false,
        needs_connection: true,
        grant_exists: true,
      });

      const allowed = await person(carol).post(`/api/authorization-requests/${id}/allow`);
      expect(allowed.status, allowed.text).toBe(200);
      expect(allowed.json<{ data: View }>().data).toMatchObject({ status: 'pending', step: 'connect' });

      // The broker's callback completes it, whether or not the browser comes back to the page.
      await connectThirdParty(base, carol, mail.service);
      const state = await g.state(id, { 'if-none-match': '"pending"', 'x-long-poll-timeout': '5' });
      expect(state.status).toBe(200);
      expect(state.json<{ data: { status: string; answered_at: string | null } }>().data).toMatchObject({
        status: 'completed',
        answered_at: expect.any(String) as string,
      });
      expect((await view(carol, id)).step).toBe('done');
      expect((await g.exchange(carol, mail.agent)).status).toBe(200);
    });

    it('a request that needs both: Allow writes the grant, then waits at connect', async () => {
      const erin = 'erin@example.com';
      const refusal = await g.refused(erin, mail.agent);
      expect(refusal.error).toBe('access_denied');
      const id = refusal.authorization_request?.id as string;
      expect(await view(erin, id)).toMatchObject({ step: 'consent', needs_grant: true, needs_connection: true });
      const allowed = await person(erin).post(`/api/authorization-requests/${id}/allow`, {});
      expect(allowed.json<{ data: View }>().data).toMatchObject({
        status: 'pending',
        step: 'connect',
        grant_exists: true,
      });
      // Allowed already: a second Allow writes nothing more and still waits for the connection.
      const again = await person(erin).post(`/api/authorization-requests/${id}/allow`, {});
      expect(again.json<{ data: View }>().data).toMatchObject({ status: 'pending', step: 'connect' });
    });

    it('deny: the request ends denied; the held wait is woken with it', async () => {
      const frank = 'frank@example.com';
      const id = (await g.refused(frank, mail.agent)).authorization_request?.id as string;
      const hub = gateway.broker.broker.server('enduser').app.get(LongPollHub);
      const before = hub.held;
      const held = g.state(id, { 'if-none-match': '"pending"', 'x-long-poll-timeout': '60' });
      await eventually(
        () => hub.held,
        (n) => n > before,
        { waitingFor: 'the wait to be held' },
      );
      const denied = await person(frank).post(`/api/authorization-requests/${id}/deny`);
      expect(denied.status, denied.text).toBe(200);
      expect(denied.json<{ data: View }>().data).toMatchObject({ status: 'denied', step: 'done' });
      const woken = await held;
      expect(woken.status).toBe(200);
      expect(woken.headers.etag).toBe('"denied"');
      expect(woken.json<{ data: { status: string } }>().data.status).toBe('denied');
      const allowAfter = await person(frank).post(`/api/authorization-requests/${id}/allow`, {});
      expect(allowAfter.status).toBe(409);
      expect(allowAfter.json<{ message: string }>().message).toContain('denied');
      // The refusal continues; a new refusal is a new request (the old one is no longer pending).
      const next = await g.refused(frank, mail.agent);
      expect(next.authorization_request?.id).not.toBe(id);
    });

    it('the wait answers 304 with ETag "pending" when nothing changes before the timeout', async () => {
      const gail = 'gail@example.com';
      const id = (await g.refused(gail, mail.agent)).authorization_request?.id as string;
      const response = await g.state(id, { 'if-none-match': '"pending"', 'x-long-poll-timeout': '1' });
      expect(response.status).toBe(304);
      expect(response.headers.etag).toBe('"pending"');
      expect(response.text).toBe('');
    });

    it("only the request's person can act on it; unknown and malformed ids are 404", async () => {
      const hank = 'hank@example.com';
      const id = (await g.refused(hank, mail.agent)).authorization_request?.id as string;
      const stranger = person('mallory@example.com');
      for (const response of [
        await stranger.get(`/api/authorization-requests/${id}`),
        await stranger.post(`/api/authorization-requests/${id}/allow`, {}),
        await stranger.post(`/api/authorization-requests/${id}/deny`),
      ]) {
        expect(response.status).toBe(403);
        expect(response.json()).toEqual({ error: 'forbidden', message: expect.any(String) as string });
      }
      expect((await view(hank, id)).status).toBe('pending');
      for (const path of [
        `/api/authorization-requests/${crypto.randomUUID()}`,
        '/api/authorization-requests/not-a-uuid',
      ]) {
        const response = await person(hank).get(path);
        expect(response.status).toBe(404);
        expect(response.json<{ error: string }>().error).toBe('not_found');
      }
    });

    it("records the request's events on its person's activity; someone else opening the link once", async () => {
      const lou = 'lou@example.com';
      const id = (await g.refused(lou, mail.agent)).authorization_request?.id as string;
      const created = await eventually(
        () => activityOf(base, lou, 'authorization_request.created', id),
        (events) => events.length > 0,
        { waitingFor: 'authorization_request.created' },
      );
      expect(created).toEqual([
        expect.objectContaining({
          actor: { type: 'gateway', id: 'gateway-1' },
          agent_id: mail.agent,
          service_id: mail.service,
          details: { authorization_request_id: id, scopes: [], needs_grant: true, needs_connection: true },
        }) as ActivityItem,
      ]);
      const stranger = person('mallory@example.com');
      expect((await stranger.get(`/api/authorization-requests/${id}`)).status).toBe(403);
      expect((await stranger.post(`/api/authorization-requests/${id}/deny`)).status).toBe(403);
      const misdirected = await activityOf(base, lou, 'authorization_request.misdirected', id);
      expect(misdirected).toHaveLength(1);
      expect(misdirected[0]?.actor.type).toBe('principal');
      // The owner is told who tried their link, and that it was refused.
      expect(misdirected[0]?.details).toMatchObject({ authorization_request_id: id, opener: 'mallory@example.com' });
      expect(misdirected[0]?.outcome).toBe('failure');
      // Nothing of it on the opener's own activity.
      expect(await activityOf(base, 'mallory@example.com', 'authorization_request.misdirected', id)).toEqual([]);
      expect((await person(lou).post(`/api/authorization-requests/${id}/deny`)).status).toBe(200);
      const denied = await activityOf(base, lou, 'authorization_request.denied', id);
      expect(denied.map((event) => event.actor)).toEqual([{ type: 'principal', id: lou }]);
    });

    it("the wait takes the gateway's client assertion, authorized by the exchange's expression", async () => {
      const id = (await g.refused('ian@example.com', mail.agent)).authorization_request?.id as string;
      const none = await http(`${base}/api/authorization-requests/${id}/state`);
      expect(none.status).toBe(401);
      expect(none.json<{ error: string }>().error).toBe('unauthorized');
      const other = await g.state(id, {}, 'gateway-2');
      expect(other.status).toBe(403);
      expect(other.json<{ error: string }>().error).toBe('forbidden');
      const bearer = await http(`${base}/api/authorization-requests/${id}/state`, {
        headers: { authorization: `Bearer ${await gateway.assertion()}` },
      });
      expect(bearer.status).toBe(200);
      expect((await g.state('not-a-uuid')).status).toBe(400);
      const unknown = await g.state(crypto.randomUUID());
      expect(unknown.status).toBe(404);
      expect(unknown.json<{ error: string }>().error).toBe('not_found');
      expect((await g.state(id, { 'x-long-poll-timeout': '121' })).status).toBe(400);
    });
  },
);

describe('authorization requests: expiry and configuration', () => {
  let gateway: GatewayFixture;
  let mail: MailService;
  let g: ReturnType<typeof gatewayOf>;

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      config: {
        ...BASE_CONFIG,
        authorization_requests: {
          expiry: '2s',
          rate_limit: { max_requests_per_minute: 2, max_pending_per_principal: 3 },
        },
      },
    });
    mail = await registerMailService(new ApiClient(gateway.broker.url('admin')), gateway.base);
    g = gatewayOf(gateway);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await mail?.provider.stop();
  });

  it('a held wait is answered expired at the expiry; the page then says expired and Allow is 410', async () => {
    const jo = 'jo@example.com';
    const member = (await g.refused(jo, mail.agent)).authorization_request as Member;
    expect(member.expires_in).toBeLessThanOrEqual(2);
    const held = await g.state(member.id, { 'if-none-match': '"pending"', 'x-long-poll-timeout': '60' });
    expect(held.status).toBe(200);
    expect(held.headers.etag).toBe('"expired"');
    expect(held.json<{ data: { status: string } }>().data.status).toBe('expired');
    const jos = new ApiClient(gateway.base, jo);
    const shown = (await jos.get(`/api/authorization-requests/${member.id}`)).json<{ data: View }>().data;
    expect(shown).toMatchObject({ status: 'expired', step: 'done', expires_in: 0 });
    const allowed = await jos.post(`/api/authorization-requests/${member.id}/allow`, {});
    expect(allowed.status).toBe(410);
    expect(allowed.json<{ error: string }>().error).toBe('gone');
    // A new refusal makes a new request.
    expect((await g.refused(jo, mail.agent)).authorization_request?.id).not.toBe(member.id);
  });

  it('over authorization_requests.rate_limit the refusal carries no link', async () => {
    const lee = 'lee@example.com';
    expect((await g.refused(lee, mail.agent, 'a')).authorization_request).toBeDefined();
    expect((await g.refused(lee, mail.agent, 'b')).authorization_request).toBeDefined();
    // Two creations this minute for Lee and this agent: the third is the plain refusal.
    const third = await g.refused(lee, mail.agent, 'c');
    expect(third).toEqual({ error: 'access_denied', error_description: NOT_DELEGATED });
  });

  it('ends a request nobody looks at when its time is up, with its expired event', async () => {
    const max = 'max@example.com';
    const id = (await g.refused(max, mail.agent)).authorization_request?.id as string;
    const app = gateway.broker.broker.server('enduser').app;
    const stored = await eventually(
      async () => {
        await app.get(AuthorizationRequestExpiry).sweepNow();
        return (await app.get(AuthorizationRequestRepository).find(id))?.status;
      },
      (status) => status === 'expired',
      { waitingFor: 'the sweep to end the request' },
    );
    expect(stored).toBe('expired');
    const expired = await eventually(
      () => activityOf(gateway.base, max, 'authorization_request.expired', id),
      (events) => events.length > 0,
    );
    expect(expired.map((event) => event.actor)).toEqual([{ type: 'broker', id: null }]);
  });
});

describe('authorization requests: off', () => {
  let gateway: GatewayFixture;
  let mail: MailService;

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      config: { ...BASE_CONFIG, authorization_requests: { enabled: false } },
    });
    mail = await registerMailService(new ApiClient(gateway.broker.url('admin')), gateway.base);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await mail?.provider.stop();
  });

  it('with authorization_requests.enabled false a refusal is exactly as before', async () => {
    const response = (await gateway.exchange('kim@example.com', mail.agent)).response;
    expect(response.status).toBe(403);
    expect(response.json()).toEqual({ error: 'access_denied', error_description: NOT_DELEGATED });
    await new ApiClient(gateway.base, 'kim@example.com').post(`/api/consent/agents/${mail.agent}/grants`, {
      granted_permission_sets: { [mail.set]: [mail.service] },
    });
    const noSession = (await gateway.exchange('kim@example.com', mail.agent)).response;
    expect(noSession.json()).toEqual({
      error: 'invalid_grant',
      error_description: NO_SESSION,
      error_uri: `${gateway.base}/api/third-party/${mail.service}/oauth2/authorize`,
    });
    expect(gateway.broker.broker.server('enduser').app.get(TokenVault)).toBeDefined();
  });
});
