import { randomUUID } from 'node:crypto';
import {
  eventually,
  http,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
  type TestBackend,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthorizationRequestWorld,
  person,
  REQUEST_EVENTS,
  type Refusal,
  type RequestState,
  type RequestView,
  type TestService,
} from '../support/authorization-requests';
import { BOTH_SERVERS } from '../support/servers';

/** Small limits, so a test reaches them in a few exchanges; every other test uses a person of its own. */
const LIMITS = { max_pending_per_principal: 3, max_requests_per_minute: 2 };

interface ActivityEvent {
  type: string;
  outcome: string;
  actor: { type: string; id: string | null };
  agent_id: string | null;
  service_id: string | null;
  details: Record<string, unknown>;
}

/** A broker whose gateway `gateway-1` may exchange (and wait), with the authorization requests' `config`. */
async function world(backend: TestBackend, config: Record<string, unknown> = {}) {
  const gateway = await startGatewayFixture({
    servers: BOTH_SERVERS,
    backend,
    config: {
      token_exchange: { authorization: { cel: { expression: 'client_assertion.sub == "gateway-1"' } } },
      authorization_requests: config,
    },
  });
  return { gateway, world: new AuthorizationRequestWorld(gateway.broker, gateway.base, gateway.issuer) };
}

/** A view without `expires_in`, which counts down between two reads. */
const withoutCountdown = ({ expires_in: _countdown, ...view }: RequestView): Omit<RequestView, 'expires_in'> => view;

const errorOf = (response: HttpResponse): { error: string; message: string } =>
  response.json<{ error: string; message: string }>();

/**
 * What goes wrong around an authorization request (docs/authorization-requests.md): a link
 * opened by someone else, an expired or used link, a forged or broken id, a retry storm, the
 * rate limits, a gateway that may not wait, and secrets that must never show.
 */
describe.each(testBackends())('authorization requests refused and misused on $name', (backend) => {
  let gateway: GatewayFixture;
  let ar: AuthorizationRequestWorld;
  let services: TestService[];
  let agent: string;
  /** Every answer body of this file's broker, searched for secrets at the end. */
  const bodies: string[] = [];
  const kept = (response: HttpResponse): HttpResponse => {
    bodies.push(response.text);
    return response;
  };

  beforeAll(async () => {
    ({ gateway, world: ar } = await world(backend, { rate_limit: LIMITS }));
    services = await ar.services(4);
    agent = await ar.agent(services);
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const activity = async (principal: string, type: string): Promise<ActivityEvent[]> => {
    const response = kept(await ar.user(principal).get(`/api/activity?type=${type}&limit=100`));
    expect(response.status, response.text).toBe(200);
    return response.json<{ data: ActivityEvent[] }>().data;
  };

  it("answers 403 forbidden to someone else opening the link (GET, allow, deny); the request, the gateway's held wait and the owner's grant stay as they were, and the owner's activity shows one misdirected event per opener", async () => {
    const owner = person('owner');
    const mallory = person('mallory');
    const trudy = person('trudy');
    const [mail] = services as [TestService];
    const request = await ar.requested(owner, agent, mail);
    const before = await ar.viewed(owner, request.id);
    const holding = ar.holding;
    let answered = false;
    const waiting = ar.held(request.id).finally(() => {
      answered = true;
    });
    await eventually(
      () => ar.holding,
      (held) => held === holding + 1,
      { waitingFor: 'the wait to be held' },
    );

    for (const opener of [mallory, trudy, mallory, trudy]) {
      for (const attempt of [
        ar.view(opener, request.id),
        ar.allow(opener, request.id, { valid_until: null }),
        ar.deny(opener, request.id),
      ]) {
        const response = kept(await attempt);
        expect(response.status, response.text).toBe(403);
        expect(errorOf(response)).toEqual({ error: 'forbidden', message: expect.any(String) as string });
        expect(response.text).not.toContain(owner);
      }
    }

    expect(answered).toBe(false);
    expect(await ar.viewed(owner, request.id)).toEqual({ ...before, expires_in: expect.any(Number) as number });
    expect(await ar.grants(owner, agent)).toEqual([]);
    // The owner's activity shows one refused opening per opener, naming the opener in its details (it names no
    // other person as an actor); the ledger names the opener as the actor.
    const misdirected = await activity(owner, 'authorization_request.misdirected');
    expect(misdirected.map((event) => event.details.opener).sort()).toEqual([mallory, trudy].sort());
    expect(misdirected.map((event) => event.outcome)).toEqual(['failure', 'failure']);
    for (const event of misdirected) {
      expect(event).toMatchObject({ actor: { type: 'principal' }, agent_id: agent, service_id: mail.id });
      expect(event.details).toMatchObject({ authorization_request_id: request.id });
    }
    const ledger = await ar.events(owner, ['authorization_request.misdirected']);
    expect(ledger.map((event) => event.actor.id).sort()).toEqual([mallory, trudy].sort());
    expect(ledger.every((event) => event.principal === owner && event.actor.type === 'principal')).toBe(true);
    // Recorded on the owner's activity, not the opener's.
    expect(await activity(mallory, 'authorization_request.misdirected')).toEqual([]);

    // The wait answers the owner's own decision: it was still held, with nothing to say, until now.
    expect((await ar.deny(owner, request.id)).status).toBe(200);
    const response = kept(await waiting);
    expect(response.status).toBe(200);
    expect(response.json<{ data: RequestState }>().data.status).toBe('denied');
  });

  it("answers the gateway's held wait `denied` when the person denies, with the new state and ETag", async () => {
    const alice = person('alice');
    const request = await ar.requested(alice, agent, services[1] as TestService);
    const now = kept(await ar.state(request.id));
    expect(now.status, now.text).toBe(200);
    expect(now.headers.etag).toBe('"pending"');
    expect(now.json<{ data: RequestState }>().data).toMatchObject({
      id: request.id,
      status: 'pending',
      principal: alice,
      agent_id: agent,
      answered_at: null,
    });
    const holding = ar.holding;
    const waiting = ar.held(request.id);
    await eventually(
      () => ar.holding,
      (held) => held === holding + 1,
      { waitingFor: 'the wait to be held' },
    );

    const denied = kept(await ar.deny(alice, request.id));
    expect(denied.status, denied.text).toBe(200);
    expect(denied.json<{ data: RequestView }>().data).toMatchObject({ status: 'denied', step: 'done' });
    const response = kept(await waiting);
    expect(response.status).toBe(200);
    expect(response.headers.etag).toBe('"denied"');
    const state = response.json<{ data: RequestState }>().data;
    expect(state).toMatchObject({ id: request.id, status: 'denied', answered_at: expect.any(String) as string });
    // A wait naming the old status answers at once.
    const late = kept(await ar.held(request.id));
    expect(late.status).toBe(200);
    expect(late.json<{ data: RequestState }>().data.status).toBe('denied');
  });

  it('answers 409 conflict to allow and deny once the link was used (completed or denied), saying which, and changes nothing', async () => {
    const alice = person('alice');
    const [mail, calendar] = services as [TestService, TestService];
    await ar.connect(alice, mail);
    const completed = await ar.requested(alice, agent, mail);
    const allowed = kept(await ar.allow(alice, completed.id, { valid_until: null }));
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.json<{ data: RequestView }>().data).toMatchObject({ status: 'completed', step: 'done' });
    const denied = await ar.requested(alice, agent, calendar);
    expect((await ar.deny(alice, denied.id)).status).toBe(200);
    const grantBefore = await ar.grants(alice, agent);
    expect(grantBefore).toHaveLength(1);
    const before = [await ar.viewed(alice, completed.id), await ar.viewed(alice, denied.id)].map(withoutCountdown);
    // Two created events (queued, like the exchange's own), completed and denied.
    const eventsBefore = await eventually(
      () => ar.events(alice, REQUEST_EVENTS),
      (events) => events.length === 4,
      { waitingFor: 'the four events of the two requests' },
    );

    for (const [id, status] of [
      [completed.id, 'completed'],
      [denied.id, 'denied'],
    ] as const) {
      for (const attempt of [ar.allow(alice, id, { valid_until: null }), ar.deny(alice, id), ar.allow(alice, id)]) {
        const response = kept(await attempt);
        expect(response.status, response.text).toBe(409);
        expect(errorOf(response).error).toBe('conflict');
        expect(errorOf(response).message).toContain(status);
      }
    }

    expect([await ar.viewed(alice, completed.id), await ar.viewed(alice, denied.id)].map(withoutCountdown)).toEqual(
      before,
    );
    expect(await ar.grants(alice, agent)).toEqual(grantBefore);
    // A later request's created event is written after anything the refused attempts could have queued.
    const marker = await ar.requested(alice, await ar.agent(services, 'Marker Agent'), services[2] as TestService);
    const after = await eventually(
      () => ar.events(alice, REQUEST_EVENTS),
      (events) => events.some((event) => event.details.authorization_request_id === marker.id),
      { waitingFor: "the marker request's created event" },
    );
    expect(after.filter((event) => event.details.authorization_request_id !== marker.id)).toEqual(eventsBefore);
    // The person API still shows each, so the page can say what happened.
    expect(before.map((view) => view.status)).toEqual(['completed', 'denied']);
    expect(before.every((view) => view.answered_at !== null)).toBe(true);
  });

  it('answers 404 not_found to a forged id (a valid UUID nobody was given) and a broken one on the person API; the wait says 404 and 400 bad request', async () => {
    const alice = person('alice');
    const request = await ar.requested(alice, agent, services[2] as TestService);
    const forged = randomUUID();
    for (const id of [forged, request.id.slice(0, -1), request.id.slice(0, 8), `${request.id}0`, 'not-a-uuid']) {
      for (const attempt of [ar.view(alice, id), ar.allow(alice, id, {}), ar.deny(alice, id)]) {
        const response = kept(await attempt);
        expect(response.status, `${id}: ${response.text}`).toBe(404);
        expect(errorOf(response).error).toBe('not_found');
      }
    }
    const unknown = kept(await ar.state(forged));
    expect(unknown.status, unknown.text).toBe(404);
    expect(errorOf(unknown).error).toBe('not_found');
    for (const id of [request.id.slice(0, -1), request.id.slice(0, 8), `${request.id}0`, 'not-a-uuid']) {
      const response = kept(await ar.state(id));
      expect(response.status, `${id}: ${response.text}`).toBe(400);
      expect(errorOf(response).error).toBe('bad request');
    }
    // The real one is untouched.
    expect((await ar.viewed(alice, request.id)).status).toBe('pending');
  });

  it('answers a retry storm of 1,000 refused exchanges from one gateway (50 at a time) with ONE request: the same id, url and expiry, one row, one created event', async () => {
    const alice = person('alice');
    const mail = services[3] as TestService;
    // A gateway retrying resends what it has: the same assertion (no jti) and subject token.
    const fields = await ar.exchangeFields(alice, agent, mail);
    const members = new Set<string>();
    const statuses = new Set<string>();
    for (let batch = 0; batch < 20; batch += 1) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => ar.postExchange(fields)));
      for (const answer of answers) {
        const body = answer.json<Refusal>();
        statuses.add(`${answer.status} ${body.error}`);
        const { id, url, expires_at } = body.authorization_request ?? {};
        members.add(JSON.stringify({ id, url, expires_at }));
        if (batch === 0) bodies.push(answer.text);
      }
    }
    expect([...statuses]).toEqual(['403 access_denied']);
    expect(members.size).toBe(1);
    const { id, url } = JSON.parse([...members][0] as string) as { id: string; url: string };
    expect(url).toBe(`${ar.publicUrl}/authorization-requests/${id}`);
    expect(await ar.rows(alice)).toBe(1);
    // Queued like the exchange's own event: written by the ledger's next flush.
    const created = await eventually(
      () => ar.events(alice, ['authorization_request.created']),
      (events) => events.length > 0,
      { waitingFor: 'the created event' },
    );
    expect(created.map((event) => event.details.authorization_request_id)).toEqual([id]);
  }, 240_000);

  it('adds no member over max_requests_per_minute per (person, agent), nor over max_pending_per_principal: the plain refusal', async () => {
    const alice = person('alice');
    const [mail, calendar, drive, notes] = services as [TestService, TestService, TestService, TestService];
    const other = await ar.agent(services, 'Other Agent');
    const third = await ar.agent(services, 'Third Agent');
    const first = await ar.requested(alice, agent, mail);
    await ar.requested(alice, agent, calendar);

    // A third creation for the pair within the minute: refused as before, without the member.
    const overMinute = kept(await ar.exchange(alice, agent, drive));
    expect(overMinute.status).toBe(403);
    expect(overMinute.json<Refusal>()).toEqual({
      error: 'access_denied',
      error_description: expect.any(String) as string,
    });
    // The limit is per pair: another agent of the same person still gets one (her third pending request).
    await ar.requested(alice, other, drive);

    // A fourth pending request of the person: the plain refusal, whichever agent asks.
    const overPending = kept(await ar.exchange(alice, third, notes));
    expect(overPending.status).toBe(403);
    expect(overPending.json<Refusal>().authorization_request).toBeUndefined();
    expect(overPending.json<Refusal>().error).toBe('access_denied');
    expect(await ar.rows(alice)).toBe(3);

    // Once one is answered, the person has room again.
    expect((await ar.deny(alice, first.id)).status).toBe(200);
    const again = await ar.requested(alice, third, notes);
    expect(again.id).not.toBe(first.id);
    expect(await ar.rows(alice)).toBe(4);
  });

  it('answers 401 unauthorized to a wait without a valid client assertion and 403 forbidden to a gateway the exchange expression refuses', async () => {
    const alice = person('alice');
    const request = await ar.requested(alice, agent, services[0] as TestService);
    const path = `${ar.base}/api/authorization-requests/${request.id}/state`;
    const cases: [string, Record<string, string>, number, string][] = [
      ['no credentials', {}, 401, 'unauthorized'],
      ['a broken assertion', { 'x-client-assertion': 'not.a.jwt' }, 401, 'unauthorized'],
      ['a subject token instead', { 'x-client-assertion': await ar.subjectToken(alice, agent) }, 401, 'unauthorized'],
      [
        'an assertion signed by someone else',
        {
          'x-client-assertion': `${(await ar.assertion()).split('.').slice(0, 2).join('.')}.${Buffer.from('x'.repeat(64)).toString('base64url')}`,
        },
        401,
        'unauthorized',
      ],
      ['another gateway', { 'x-client-assertion': await ar.assertion('gateway-2') }, 403, 'forbidden'],
    ];
    for (const [name, headers, status, error] of cases) {
      const response = kept(await http(path, { headers }));
      expect(response.status, `${name}: ${response.text}`).toBe(status);
      expect(errorOf(response).error, name).toBe(error);
      expect(response.text, name).not.toContain(alice);
    }
    const asBearer = kept(await http(path, { headers: { authorization: `Bearer ${await ar.assertion()}` } }));
    expect(asBearer.status, asBearer.text).toBe(200);
    expect(asBearer.json<{ data: RequestState }>().data.id).toBe(request.id);
  });

  it('never shows a token or secret in an answer, an event or a log line', async () => {
    const events = await ar.admin.get(`/api/events?type=${REQUEST_EVENTS.join(',')}&limit=100`);
    expect(events.status).toBe(200);
    expect(events.json<{ items: unknown[] }>().items.length).toBeGreaterThan(0);
    const everything = [...bodies, events.text].join('\n');
    expect(ar.secrets.filter((secret) => everything.includes(secret))).toEqual([]);
    expect(gateway.broker.logs.leaked(ar.secrets)).toEqual([]);
  });
});

/**
 * An expired link, on a broker whose links live two seconds (real time: the held wait is
 * answered by the broker's own timer at the expiry).
 */
describe.each(testBackends())('an expired authorization request on $name', (backend) => {
  let gateway: GatewayFixture;
  let ar: AuthorizationRequestWorld;

  beforeAll(async () => {
    ({ gateway, world: ar } = await world(backend, { expiry: '2s' }));
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('answers the held wait `expired` at the expiry; GET says expired, allow and deny answer 410 gone; the next refusal opens a new request', async () => {
    const [mail] = (await ar.services(1)) as [TestService];
    const agent = await ar.agent([mail]);
    const alice = person('alice');
    const request = await ar.requested(alice, agent, mail);
    expect(request.expires_in).toBeLessThanOrEqual(2);

    const response = await ar.held(request.id, 60);
    expect(response.status, response.text).toBe(200);
    expect(response.headers.etag).toBe('"expired"');
    expect(response.json<{ data: RequestState }>().data).toMatchObject({ id: request.id, status: 'expired' });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(request.expires_at));

    expect(await ar.viewed(alice, request.id)).toMatchObject({ status: 'expired', step: 'done', expires_in: 0 });
    for (const attempt of [ar.allow(alice, request.id, { valid_until: null }), ar.deny(alice, request.id)]) {
      const answer = await attempt;
      expect(answer.status, answer.text).toBe(410);
      expect(errorOf(answer).error).toBe('gone');
    }
    expect(await ar.viewed(alice, request.id)).toMatchObject({ status: 'expired', answered_at: null });
    expect(await ar.grants(alice, agent)).toEqual([]);
    const state = await ar.state(request.id);
    expect(state.json<{ data: RequestState }>().data.status).toBe('expired');

    const next = await ar.requested(alice, agent, mail);
    expect(next.id).not.toBe(request.id);
    expect(gateway.broker.logs.leaked(ar.secrets)).toEqual([]);
  });
});
