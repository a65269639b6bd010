import { eventually, startGatewayFixture, testBackends, type TestBackend } from '@broker/testing';
import { WebhookDeliveryWorker } from '@broker/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthorizationRequestWorld,
  person,
  REQUEST_EVENTS,
  type LedgerEvent,
  type Refusal,
  type RequestState,
  type TestService,
} from '../support/authorization-requests';
import { BOTH_SERVERS } from '../support/servers';
import { HangingReceiver } from '../support/webhook-receiver';

interface ActivityEvent {
  id: string;
  type: string;
  actor: { type: string; id: string | null };
  agent_id: string | null;
  service_id: string | null;
  details: Record<string, unknown>;
}

interface Payload {
  type: string;
  data: {
    id: string;
    type: string;
    actor: { type: string; id: string | null };
    details: Record<string, unknown>;
  };
}

/** A broker whose gateway `gateway-1` may exchange, webhooks to loopback allowed, with `config` over it. */
async function world(backend: TestBackend, config: Record<string, unknown> = {}) {
  const gateway = await startGatewayFixture({
    servers: BOTH_SERVERS,
    backend,
    config: {
      token_exchange: { authorization: { cel: { expression: 'client_assertion.sub == "gateway-1"' } } },
      events: { webhooks: { allowed_networks: ['127.0.0.0/8'] } },
      ...config,
    },
  });
  const ar = new AuthorizationRequestWorld(gateway.broker, gateway.base, gateway.issuer);
  const receiver = await HangingReceiver.start();
  const created = await ar.admin.post('/api/webhooks', {
    url: receiver.url,
    event_types: [...REQUEST_EVENTS],
    enabled: true,
  });
  if (created.status !== 201) {
    await gateway.stop();
    await receiver.close();
    throw new Error(`webhook: ${created.status} ${created.text}`);
  }
  ar.secrets.push(created.json<{ secret: string }>().secret);
  /** Delivers what is due now and returns the one request the receiver got for `event`. */
  const delivered = async (event: LedgerEvent): Promise<Payload> => {
    await gateway.broker.broker.server('enduser').app.get(WebhookDeliveryWorker).deliverNow();
    const [hook, ...more] = await eventually(
      () => receiver.forEvent(event.id),
      (hooks) => hooks.length > 0,
      { waitingFor: `the delivery of ${event.type}` },
    );
    expect(more).toEqual([]);
    const body = hook?.body ?? '';
    expect(
      ar.secrets.filter((secret) => body.includes(secret)),
      event.type,
    ).toEqual([]);
    return JSON.parse(body) as Payload;
  };
  return {
    gateway,
    ar,
    delivered,
    stop: async () => {
      await gateway.stop();
      await receiver.close();
    },
  };
}

/**
 * Each state of an authorization request is a ledger event and a webhook delivery
 * (docs/authorization-requests.md "Events"): who did it, about whom, which request, what it
 * asked for, and never a token.
 */
describe.each(testBackends())('authorization request events and webhooks on $name', (backend) => {
  let env: Awaited<ReturnType<typeof world>>;
  let ar: AuthorizationRequestWorld;
  let mail: TestService;
  let calendar: TestService;
  let drive: TestService;
  let agent: string;

  beforeAll(async () => {
    env = await world(backend);
    ar = env.ar;
    [mail, calendar, drive] = (await ar.services(3)) as [TestService, TestService, TestService];
    agent = await ar.agent([mail, calendar, drive]);
  });

  afterAll(async () => {
    await env?.stop();
  });

  /** The wait's view of a request: what every event of it must repeat. */
  const stateOf = async (id: string): Promise<RequestState> => (await ar.state(id)).json<{ data: RequestState }>().data;

  it('records created (the gateway), completed and denied (the person) and misdirected (the opener, on the owner), each delivered by webhook, with the details and no token', async () => {
    const alice = person('alice');
    const mallory = person('mallory');
    await ar.connect(alice, mail);
    // No grant, a usable connection: Allow completes it.
    const allowed = await ar.requested(alice, agent, mail);
    // No grant, no connection: misdirected once, then denied.
    const denied = await ar.requested(alice, agent, calendar);
    expect((await ar.view(mallory, denied.id)).status).toBe(403);
    expect((await ar.allow(alice, allowed.id, { valid_until: null })).status).toBe(200);
    expect((await ar.deny(alice, denied.id)).status).toBe(200);

    const gateway = { type: 'gateway', id: 'gateway-1' };
    const expectations: [string, string, LedgerEvent['actor'], string, boolean][] = [
      ['authorization_request.created', allowed.id, gateway, mail.id, false],
      ['authorization_request.created', denied.id, gateway, calendar.id, true],
      ['authorization_request.misdirected', denied.id, { type: 'principal', id: mallory }, calendar.id, true],
      ['authorization_request.completed', allowed.id, { type: 'principal', id: alice }, mail.id, false],
      ['authorization_request.denied', denied.id, { type: 'principal', id: alice }, calendar.id, true],
    ];
    // The created events are queued like the exchange's own (the refusal never waits for the ledger).
    const events = await eventually(
      () => ar.events(alice, REQUEST_EVENTS),
      (found) => found.length >= expectations.length,
      { waitingFor: 'the five events' },
    );
    expect(events).toHaveLength(expectations.length);
    const scopes = { [allowed.id]: (await stateOf(allowed.id)).scopes, [denied.id]: (await stateOf(denied.id)).scopes };
    for (const [type, id, actor, service, needsConnection] of expectations) {
      const event = events.find((one) => one.type === type && one.details.authorization_request_id === id);
      expect(event, `${type} of ${id}`).toMatchObject({
        type,
        principal: alice,
        actor,
        agent_id: agent,
        service_id: service,
      });
      expect(event?.details, type).toEqual({
        authorization_request_id: id,
        scopes: scopes[id],
        needs_grant: true,
        needs_connection: needsConnection,
        // The owner may learn who opened the link (the activity names no other person as an actor).
        ...(type === 'authorization_request.misdirected' ? { opener: mallory } : {}),
      });
      // Someone else's opening is refused; every other state is a success.
      expect(event?.outcome, type).toBe(type === 'authorization_request.misdirected' ? 'failure' : 'success');
      const payload = await env.delivered(event as LedgerEvent);
      expect(payload).toMatchObject({
        type,
        data: { id: event?.id, type, actor, details: event?.details },
      });
    }
    expect(
      Object.values(scopes)
        .flat()
        .every((scope) => typeof scope === 'string'),
    ).toBe(true);

    // The person sees them on her activity; the opener's own activity does not carry her request.
    const activity = await ar.user(alice).get(`/api/activity?type=${REQUEST_EVENTS.join(',')}&limit=100`);
    expect(activity.status, activity.text).toBe(200);
    expect(
      activity
        .json<{ data: ActivityEvent[] }>()
        .data.map((event) => event.id)
        .sort(),
    ).toEqual(events.map((event) => event.id).sort());
    const opener = await ar.user(mallory).get(`/api/activity?type=${REQUEST_EVENTS.join(',')}`);
    expect(opener.json<{ data: ActivityEvent[] }>().data).toEqual([]);
  });

  it('records needs_grant false and needs_connection true for a grant whose connection is missing (400 invalid_grant with the member)', async () => {
    const bob = person('bob');
    const grant = await ar.user(bob).post(`/api/consent/agents/${agent}/grants`, {
      granted_permission_sets: { [drive.permissionSet]: [drive.id] },
    });
    expect(grant.status, grant.text).toBe(201);
    const response = await ar.exchange(bob, agent, drive);
    expect(response.status, response.text).toBe(400);
    const refusal = response.json<Refusal>();
    expect(refusal.error).toBe('invalid_grant');
    expect(refusal.error_uri).toEqual(expect.any(String));
    const id = refusal.authorization_request?.id as string;
    const [created, ...more] = await eventually(
      () => ar.events(bob, REQUEST_EVENTS),
      (found) => found.length > 0,
      { waitingFor: 'the created event' },
    );
    expect(more).toEqual([]);
    expect(created).toMatchObject({
      type: 'authorization_request.created',
      principal: bob,
      actor: { type: 'gateway', id: 'gateway-1' },
      agent_id: agent,
      service_id: drive.id,
    });
    expect(created?.details).toEqual({
      authorization_request_id: id,
      scopes: (await stateOf(id)).scopes,
      needs_grant: false,
      needs_connection: true,
    });
    expect((await env.delivered(created as LedgerEvent)).data.details).toEqual(created?.details);
  });

  it('never logs a token or secret', () => {
    expect(env.gateway.broker.logs.leaked(ar.secrets)).toEqual([]);
  });
});

/** The expiry is the broker's own event, on a broker whose links live two seconds (real time). */
describe.each(testBackends())('the expired authorization request event on $name', (backend) => {
  let env: Awaited<ReturnType<typeof world>>;

  beforeAll(async () => {
    env = await world(backend, { authorization_requests: { expiry: '2s' } });
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('records expired (the broker) once the link expires, delivered by webhook, with the details and no token', async () => {
    const { ar } = env;
    const [mail] = (await ar.services(1)) as [TestService];
    const agent = await ar.agent([mail]);
    const alice = person('alice');
    const request = await ar.requested(alice, agent, mail);
    const scopes = (await ar.state(request.id)).json<{ data: RequestState }>().data.scopes;
    const answer = await ar.held(request.id, 60);
    expect(answer.json<{ data: RequestState }>().data.status).toBe('expired');

    const events = await eventually(
      () => ar.events(alice, REQUEST_EVENTS),
      (found) => found.some((event) => event.type === 'authorization_request.expired'),
      { waitingFor: 'the expired event' },
    );
    expect(events.map((event) => event.type)).toEqual([
      'authorization_request.created',
      'authorization_request.expired',
    ]);
    const expired = events[1] as LedgerEvent;
    expect(expired).toMatchObject({
      principal: alice,
      actor: { type: 'broker', id: null },
      agent_id: agent,
      service_id: mail.id,
    });
    expect(expired.details).toEqual({
      authorization_request_id: request.id,
      scopes,
      needs_grant: true,
      needs_connection: true,
    });
    const payload = await env.delivered(expired);
    expect(payload).toMatchObject({ type: expired.type, data: { id: expired.id, details: expired.details } });
    // Read again (the person's page, the wait): still one expired event.
    await ar.view(alice, request.id);
    await ar.state(request.id);
    expect(
      (await ar.events(alice, ['authorization_request.expired'])).map(
        (event) => event.details.authorization_request_id,
      ),
    ).toEqual([request.id]);
    expect(env.gateway.broker.logs.leaked(ar.secrets)).toEqual([]);
  });
});
