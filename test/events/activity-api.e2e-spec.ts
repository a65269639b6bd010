import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type AnyBrokerEvent, type EventActor, type EventToAppend } from '@broker/events';
import { EventRepository } from '@broker/persistence';
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
import { BOTH_SERVERS } from '../support/servers';

/**
 * The person's activity (`GET /api/activity`) and the admins' ledger
 * (`GET /api/events`, its NDJSON export). Events are written straight to the ledger with
 * `EventRepository.append`, so these tests do not depend on which actions record what.
 */

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const ROOT = 'root-admin@example.com';
const MAIL_AGENT = randomUUID();
const FILES_AGENT = randomUUID();
const MAIL = randomUUID();
const FILES = randomUUID();

/** The fields every end-user event has, and nothing else (no `principal`). */
const ACTIVITY_FIELDS = [
  'actor',
  'agent_id',
  'details',
  'id',
  'occurred_at',
  'outcome',
  'service_id',
  'trace_id',
  'type',
];

interface ActivityEvent {
  id: string;
  type: string;
  occurred_at: string;
  actor: { type: string; id: string | null };
  agent_id: string | null;
  service_id: string | null;
  outcome: string;
  trace_id: string | null;
  details: Record<string, unknown>;
}

interface AdminEvent extends ActivityEvent {
  principal: string | null;
}

interface ActivityPage {
  data: ActivityEvent[];
  next_cursor: string | null;
}

interface AdminPage {
  items: AdminEvent[];
  next_cursor: string | null;
}

interface Spec {
  readonly principal: string | null;
  readonly at: Date;
  readonly agent?: string | null;
  readonly service?: string | null;
  readonly actor?: EventActor;
}

/** An event of a kind that names an agent and a service, with a trace id. */
function exchanged({
  principal,
  at,
  agent = MAIL_AGENT,
  service = MAIL,
  actor = { type: 'gateway', id: 'gateway-1' },
}: Spec): EventToAppend {
  const event: AnyBrokerEvent = {
    type: 'token.exchanged',
    actor,
    principal,
    agentId: agent,
    serviceId: service,
    outcome: 'success',
    traceId: randomUUID().replaceAll('-', ''),
    details: { resource: 'https://mail.example.com/api', oauth_error: null },
  };
  return { id: randomUUID(), occurredAt: at, event };
}

function revoked({
  principal,
  at,
  agent = MAIL_AGENT,
  actor = { type: 'principal', id: principal },
}: Spec): EventToAppend {
  const event: AnyBrokerEvent = {
    type: 'grant.revoked',
    actor,
    principal,
    agentId: agent,
    serviceId: null,
    outcome: 'success',
    traceId: null,
    details: {},
  };
  return { id: randomUUID(), occurredAt: at, event };
}

function disconnected({ principal, at, service = FILES }: Spec): EventToAppend {
  const event: AnyBrokerEvent = {
    type: 'session.disconnected',
    actor: { type: 'principal', id: principal },
    principal,
    agentId: null,
    serviceId: service,
    outcome: 'failure',
    traceId: null,
    details: {},
  };
  return { id: randomUUID(), occurredAt: at, event };
}

const ids = (events: readonly EventToAppend[]): string[] => events.map((event) => event.id);

describe.each(testBackends())('activity and events APIs on $name', (backend) => {
  const clock = new FrozenClock('2026-06-01T12:00:00.000Z');
  // Minutes after a fixed point a few days back: inside the retention period, far from any event the broker records itself.
  const t0 = new Date('2026-05-20T08:00:00.000Z');
  const at = (minutes: number): Date => new Date(t0.getTime() + minutes * 60_000);
  let broker: TestBroker;
  let ledger: EventRepository;
  let alice: ApiClient;
  let bob: ApiClient;
  let admin: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, clock, config: { storage: await backend.storage() } });
    ledger = broker.broker.server('enduser').app.get(EventRepository);
    alice = new ApiClient(broker.url('enduser'), ALICE);
    bob = new ApiClient(broker.url('enduser'), BOB);
    admin = new ApiClient(broker.url('admin'), ROOT);
  });

  afterAll(async () => {
    await broker?.stop();
  });

  /** Every page of the caller's activity for `query`, following `next_cursor`. */
  async function allActivity(client: ApiClient, query: string): Promise<ActivityEvent[]> {
    const events: ActivityEvent[] = [];
    let cursor: string | null = null;
    do {
      const response = await client.get(
        `/api/activity?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      expect(response.status, response.text).toBe(200);
      const page = response.json<ActivityPage>();
      events.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor !== null);
    return events;
  }

  describe('GET /api/activity', () => {
    // Day 0 of this block: alice's and bob's events interleaved, one alice event done by an admin.
    const mine = [
      exchanged({ principal: ALICE, at: at(1) }),
      revoked({ principal: ALICE, at: at(2), agent: FILES_AGENT }),
      disconnected({ principal: ALICE, at: at(3) }),
      exchanged({ principal: ALICE, at: at(4), agent: FILES_AGENT, service: FILES }),
      revoked({ principal: ALICE, at: at(5), actor: { type: 'admin', id: ROOT } }),
    ];
    const bobs = [
      exchanged({ principal: BOB, at: at(1) }),
      revoked({ principal: BOB, at: at(3) }),
      revoked({ principal: ALICE, at: at(6), actor: { type: 'principal', id: BOB } }),
    ];

    beforeAll(async () => {
      // Written in the order of their times, as the ledger would have received them.
      await ledger.append([...mine, ...bobs].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime()));
    });

    it('shows the caller only their own events, newest first, each without a principal field', async () => {
      const response = await alice.get('/api/activity');
      expect(response.status, response.text).toBe(200);
      const page = response.json<ActivityPage>();
      expect(page.next_cursor).toBeNull();
      const expected = [bobs[2] as EventToAppend, ...[...mine].reverse()];
      expect(page.data.map((event) => event.id)).toEqual(ids(expected));
      for (const event of page.data) expect(Object.keys(event).sort()).toEqual(ACTIVITY_FIELDS);
      const first = mine[0] as EventToAppend;
      expect(page.data.find((event) => event.id === first.id)).toEqual({
        id: first.id,
        type: 'token.exchanged',
        occurred_at: at(1).toISOString(),
        actor: { type: 'gateway', id: 'gateway-1' },
        agent_id: MAIL_AGENT,
        service_id: MAIL,
        outcome: 'success',
        trace_id: first.event.traceId,
        details: { resource: 'https://mail.example.com/api', oauth_error: null },
      });
      // Bob's own events are his alone.
      const bobsView = (await bob.get('/api/activity')).json<ActivityPage>();
      expect(bobsView.data.map((event) => event.id)).toEqual(ids([bobs[1] as EventToAppend, bobs[0] as EventToAppend]));
    });

    it('never names another person or an administrator: such an actor is shown by its type alone', async () => {
      const response = await alice.get('/api/activity');
      const byId = new Map(response.json<ActivityPage>().data.map((event) => [event.id, event]));
      expect(byId.get((mine[4] as EventToAppend).id)?.actor).toEqual({ type: 'admin', id: null });
      expect(byId.get((bobs[2] as EventToAppend).id)?.actor).toEqual({ type: 'principal', id: null });
      expect(byId.get((mine[1] as EventToAppend).id)?.actor).toEqual({ type: 'principal', id: ALICE });
      expect(response.text).not.toContain(BOB);
      expect(response.text).not.toContain(ROOT);
      expect((await bob.get('/api/activity')).text).not.toContain(ALICE);
    });

    it('refuses to be asked for someone else: a principal parameter is an unknown field', async () => {
      const response = await alice.get(`/api/activity?principal=${encodeURIComponent(BOB)}`);
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({
        error: 'bad request',
        details: [expect.objectContaining({ field: 'principal' })],
      });
      expect((await alice.as(null).get('/api/activity')).status).toBe(401);
    });

    it('filters by agent, service, kind (repeated or comma-separated) and time range', async () => {
      const shown = async (query: string): Promise<string[]> =>
        (await allActivity(alice, query)).map((event) => event.id);
      const [e1, e2, e3, e4, e5] = mine as [EventToAppend, EventToAppend, EventToAppend, EventToAppend, EventToAppend];
      const byBob = bobs[2] as EventToAppend;
      expect(await shown(`agent_id=${FILES_AGENT}`)).toEqual(ids([e4, e2]));
      expect(await shown(`service_id=${FILES}`)).toEqual(ids([e4, e3]));
      expect(await shown('type=grant.revoked')).toEqual(ids([byBob, e5, e2]));
      expect(await shown('type=grant.revoked&type=session.disconnected')).toEqual(ids([byBob, e5, e3, e2]));
      expect(await shown('type=grant.revoked,session.disconnected')).toEqual(ids([byBob, e5, e3, e2]));
      // `from` is inclusive, `to` exclusive.
      expect(await shown(`from=${at(2).toISOString()}&to=${at(5).toISOString()}`)).toEqual(ids([e4, e3, e2]));
      expect(await shown(`from=${encodeURIComponent('2026-05-20T10:04:00+02:00')}`)).toEqual(ids([byBob, e5, e4]));
      expect(await shown(`agent_id=${MAIL_AGENT}&type=token.exchanged&to=${at(2).toISOString()}`)).toEqual(ids([e1]));
      expect(await shown('type=approval.requested')).toEqual([]);
    });

    it('pages with limit and next_cursor, stable while new events arrive between pages', async () => {
      const first = (await alice.get('/api/activity?limit=2')).json<ActivityPage>();
      expect(first.data.map((event) => event.id)).toEqual(ids([bobs[2] as EventToAppend, mine[4] as EventToAppend]));
      expect(first.next_cursor).toEqual(expect.any(String));
      // New events arrive: they land above the first page and do not shift the next ones.
      const arriving = [exchanged({ principal: ALICE, at: at(7) }), revoked({ principal: ALICE, at: at(8) })];
      await ledger.append(arriving);
      const second = (
        await alice.get(`/api/activity?limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`)
      ).json<ActivityPage>();
      expect(second.data.map((event) => event.id)).toEqual(ids([mine[3] as EventToAppend, mine[2] as EventToAppend]));
      const third = (
        await alice.get(`/api/activity?limit=2&cursor=${encodeURIComponent(second.next_cursor ?? '')}`)
      ).json<ActivityPage>();
      expect(third.data.map((event) => event.id)).toEqual(ids([mine[1] as EventToAppend, mine[0] as EventToAppend]));
      expect(third.next_cursor).toBeNull();
      // A new walk from the top sees the new events first, then everything once.
      const again = await allActivity(alice, 'limit=3');
      expect(again.map((event) => event.id)).toEqual(
        ids([...arriving].reverse().concat([bobs[2] as EventToAppend], [...mine].reverse())),
      );
      // 50 per page unless limit says otherwise.
      await ledger.append(Array.from({ length: 60 }, (_, i) => disconnected({ principal: BOB, at: at(100 + i) })));
      const bobsPage = (await bob.get('/api/activity')).json<ActivityPage>();
      expect(bobsPage.data).toHaveLength(50);
      expect((await bob.get('/api/activity?limit=100')).json<ActivityPage>().data).toHaveLength(62);
    });

    it('answers 400 bad request for a bad cursor, limit or filter', async () => {
      const refused = [
        'cursor=abc',
        'cursor=0',
        'cursor=-5',
        'cursor=99999999999999999999',
        'cursor=1&cursor=2',
        'limit=0',
        'limit=101',
        'limit=1.5',
        'limit=ten',
        'agent_id=not-a-uuid',
        'service_id=42',
        'type=token.minted',
        'type=grant.revoked,',
        'type=',
        'from=yesterday',
        'from=2026-02-30T00:00:00Z',
        'to=2026-05-20T08:00:00',
        `from=${at(5).toISOString()}&to=${at(5).toISOString()}`,
        `from=${at(5).toISOString()}&to=${at(1).toISOString()}`,
      ];
      for (const query of refused) {
        const response = await alice.get(`/api/activity?${query}`);
        expect(response.status, query).toBe(400);
        const body = response.json<{ error: string; message: string }>();
        expect(body.error, query).toBe('bad request');
        expect(body.message.length, query).toBeGreaterThan(0);
      }
    });
  });

  describe('GET /api/activity/last-used', () => {
    const erin = 'erin@example.com';
    const frank = 'frank@example.com';
    /** A token exchange that failed (the agent did not get a token: not a use). */
    function refused({ principal, at: when }: Spec): EventToAppend {
      const event: AnyBrokerEvent = {
        type: 'token.exchanged',
        actor: { type: 'gateway', id: 'gateway-1' },
        principal,
        agentId: MAIL_AGENT,
        serviceId: MAIL,
        outcome: 'failure',
        traceId: null,
        details: { resource: 'https://mail.example.com/api', oauth_error: 'invalid_grant' },
      };
      return { id: randomUUID(), occurredAt: when, event };
    }
    type LastUsed = { agent_id: string; service_id: string; last_used_at: string };
    const byPair = (a: LastUsed, b: LastUsed): number =>
      `${a.agent_id}/${a.service_id}`.localeCompare(`${b.agent_id}/${b.service_id}`);

    it("answers each agent and service the caller's agents used with the newest successful exchange, the caller's only", async () => {
      await ledger.append([
        exchanged({ principal: erin, at: at(600) }),
        exchanged({ principal: erin, at: at(605) }),
        exchanged({ principal: erin, at: at(603), agent: FILES_AGENT }),
        exchanged({ principal: erin, at: at(604), agent: FILES_AGENT, service: FILES }),
        // Newer, but not a use: a refused exchange, an event of another kind, and another person's exchange.
        refused({ principal: erin, at: at(610) }),
        revoked({ principal: erin, at: at(611) }),
        exchanged({ principal: frank, at: at(612) }),
      ]);
      const response = await new ApiClient(broker.url('enduser'), erin).get('/api/activity/last-used');
      expect(response.status, response.text).toBe(200);
      const expected: LastUsed[] = [
        { agent_id: MAIL_AGENT, service_id: MAIL, last_used_at: at(605).toISOString() },
        { agent_id: FILES_AGENT, service_id: MAIL, last_used_at: at(603).toISOString() },
        { agent_id: FILES_AGENT, service_id: FILES, last_used_at: at(604).toISOString() },
      ];
      expect([...response.json<{ data: LastUsed[] }>().data].sort(byPair)).toEqual(expected.sort(byPair));
      const other = await new ApiClient(broker.url('enduser'), frank).get('/api/activity/last-used');
      expect(other.json<{ data: LastUsed[] }>().data).toEqual([
        { agent_id: MAIL_AGENT, service_id: MAIL, last_used_at: at(612).toISOString() },
      ]);
    });

    it('answers an empty list to a person whose agents used nothing', async () => {
      const response = await new ApiClient(broker.url('enduser'), 'nobody@example.com').get('/api/activity/last-used');
      expect(response.status, response.text).toBe(200);
      expect(response.json()).toEqual({ data: [] });
    });
  });

  describe('admin GET /api/events and its export', () => {
    // A separate day, so the activity tests' events stay out of these ranges.
    const day = new Date('2026-05-25T00:00:00.000Z');
    const on = (minutes: number): Date => new Date(day.getTime() + minutes * 60_000);
    const carol = 'carol@example.com';
    const dave = 'dave@example.com';
    const before = exchanged({ principal: carol, at: on(-1) });
    const atStart = revoked({ principal: carol, at: on(0) });
    const inside = [
      exchanged({ principal: dave, at: on(10) }),
      disconnected({ principal: carol, at: on(20) }),
      revoked({ principal: null, at: on(30), actor: { type: 'admin', id: ROOT } }),
    ];
    const atEnd = exchanged({ principal: dave, at: on(60) });
    const range = `from=${encodeURIComponent(on(0).toISOString())}&to=${encodeURIComponent(on(60).toISOString())}`;

    beforeAll(async () => {
      await ledger.append([before, atStart, ...inside, atEnd]);
    });

    /** Every page of `GET /api/events` for `query`. */
    async function allEvents(query: string): Promise<AdminEvent[]> {
      const events: AdminEvent[] = [];
      let cursor: string | null = null;
      do {
        const response = await admin.get(
          `/api/events?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        );
        expect(response.status, response.text).toBe(200);
        const page = response.json<AdminPage>();
        events.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor !== null);
      return events;
    }

    it("lists every person's events with their principal, filtered by principal and the other filters", async () => {
      const all = await allEvents(`${range}&limit=2`);
      expect(all.map((event) => event.id)).toEqual(ids([...inside].reverse().concat([atStart])));
      expect(all.map((event) => event.principal)).toEqual([null, carol, dave, carol]);
      expect(all[0]?.actor).toEqual({ type: 'admin', id: ROOT });
      expect((await allEvents(`principal=${encodeURIComponent(carol)}`)).map((event) => event.id)).toEqual(
        ids([inside[1] as EventToAppend, atStart, before]),
      );
      expect(
        (await allEvents(`principal=${encodeURIComponent(dave)}&type=token.exchanged&service_id=${MAIL}`)).map(
          (event) => event.id,
        ),
      ).toEqual(ids([atEnd, inside[0] as EventToAppend]));
      expect(
        (
          await allEvents(
            `principal=${encodeURIComponent(carol)}&type=grant.revoked,session.disconnected&to=${encodeURIComponent(on(20).toISOString())}`,
          )
        ).map((event) => event.id),
      ).toEqual(ids([atStart]));
    });

    it('answers 400 invalid request for a bad cursor or filter', async () => {
      for (const query of [
        'cursor=x',
        'limit=500',
        'principal=',
        `principal=${'p'.repeat(201)}`,
        'agent_id=1',
        'type=nope',
        'from=2026-13-01T00:00:00Z',
        `from=${on(5).toISOString()}&to=${on(0).toISOString()}`,
        'unknown=1',
      ]) {
        const response = await admin.get(`/api/events?${query}`);
        expect(response.status, query).toBe(400);
        expect(response.json(), query).toMatchObject({ error: 'invalid request' });
      }
    });

    const exportOf = (query: string): Promise<HttpResponse> =>
      http(`${broker.url('admin')}/api/events/export?${query}`, { headers: { 'x-remote-user': ROOT } });
    const lines = (response: HttpResponse): AdminEvent[] => {
      expect(response.text === '' || response.text.endsWith('\n'), 'every line ends with a newline').toBe(true);
      return response.text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as AdminEvent);
    };

    it("exports exactly the events of a time range as NDJSON, one event per line in the list's shape, as a download", async () => {
      const response = await exportOf(range);
      expect(response.status, response.text).toBe(200);
      expect(response.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      expect(response.headers['content-disposition']).toBe(
        'attachment; filename="events-2026-05-25T000000000Z-2026-05-25T010000000Z.ndjson"',
      );
      const exported = lines(response);
      // `from` inclusive, `to` exclusive, newest first; each line is the item GET /api/events answers (checked against its schema).
      expect(exported.map((event) => event.id)).toEqual(ids([...inside].reverse().concat([atStart])));
      expect(exported).toEqual(await allEvents(range));
      // Filters apply to the export too.
      expect(lines(await exportOf(`${range}&principal=${encodeURIComponent(dave)}`)).map((event) => event.id)).toEqual(
        ids([inside[0] as EventToAppend]),
      );
      // An empty range is an empty file.
      const empty = await exportOf(`from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`);
      expect(empty.status).toBe(200);
      expect(empty.text).toBe('');
    });

    it('the export takes every filter of the list under the same name: person, agent, service, kind', async () => {
      const document = JSON.parse(readFileSync('openapi/admin-api.json', 'utf8')) as {
        paths: Record<string, { get: { parameters: { name: string }[] } }>;
      };
      // The page's own parameters aside (the export streams every page), both operations take the same filters.
      const filters = (path: string): string[] =>
        (document.paths[path]?.get.parameters ?? [])
          .map((parameter) => parameter.name)
          .filter((name) => name !== 'cursor' && name !== 'limit')
          .sort();
      expect(filters('/api/events')).toEqual(['agent_id', 'from', 'principal', 'service_id', 'to', 'type']);
      expect(filters('/api/events/export')).toEqual(filters('/api/events'));
      const exported = async (filter: string): Promise<string[]> =>
        lines(await exportOf(`${range}&${filter}`)).map((event) => event.id);
      expect(await exported(`agent_id=${MAIL_AGENT}`)).toEqual(
        ids([inside[2] as EventToAppend, inside[0] as EventToAppend, atStart]),
      );
      expect(await exported(`service_id=${FILES}`)).toEqual(ids([inside[1] as EventToAppend]));
      expect(await exported('type=grant.revoked')).toEqual(ids([inside[2] as EventToAppend, atStart]));
      expect(await exported(`principal=${encodeURIComponent(carol)}&type=grant.revoked,session.disconnected`)).toEqual(
        ids([inside[1] as EventToAppend, atStart]),
      );
      // The same filters give the list the same events.
      for (const filter of [`agent_id=${MAIL_AGENT}`, `service_id=${FILES}`, 'type=grant.revoked']) {
        expect(
          (await allEvents(`${range}&${filter}`)).map((event) => event.id),
          filter,
        ).toEqual(await exported(filter));
      }
    });

    it('streams a range larger than one export page completely, each event once', async () => {
      const bulkDay = new Date('2026-05-27T00:00:00.000Z');
      const bulk = Array.from({ length: 1234 }, (_, i) =>
        exchanged({ principal: i % 2 === 0 ? carol : dave, at: new Date(bulkDay.getTime() + i * 1000) }),
      );
      await ledger.append(bulk);
      const exported = lines(await exportOf(`from=${bulkDay.toISOString()}&to=2026-05-28T00:00:00.000Z`));
      expect(exported).toHaveLength(1234);
      expect(exported.map((event) => event.id)).toEqual(ids([...bulk].reverse()));
      expect(
        exported.every(
          (event) => event.type === 'token.exchanged' && (event.principal === carol || event.principal === dave),
        ),
      ).toBe(true);
    });

    it('requires both ends of the range: 400 invalid request otherwise', async () => {
      for (const query of [
        `from=${on(0).toISOString()}`,
        `to=${on(0).toISOString()}`,
        '',
        `from=${on(60).toISOString()}&to=${on(0).toISOString()}`,
        `${range}&cursor=5`,
        `${range}&type=x`,
      ]) {
        const response = await exportOf(query);
        expect(response.status, query).toBe(400);
        expect(response.json(), query).toMatchObject({ error: 'invalid request' });
      }
    });
  });
});
