import { randomUUID } from 'node:crypto';
import type { AnyBrokerEvent, EventToAppend } from '@broker/events';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { EventRepository } from './event.repository';

const AGENT = randomUUID();

function revoked(principal: string, occurredAt: Date): EventToAppend {
  const event: AnyBrokerEvent = {
    type: 'grant.revoked',
    actor: { type: 'principal', id: principal },
    principal,
    agentId: AGENT,
    serviceId: null,
    outcome: 'success',
    traceId: null,
    details: {},
  };
  return { id: randomUUID(), occurredAt, event };
}

describe.each(testBackends())('EventRepository (the activity ledger) on $name', (backend) => {
  let database: Database;
  let events: EventRepository;
  const t0 = new Date('2026-03-01T10:00:00Z');
  const at = (minutes: number): Date => new Date(t0.getTime() + minutes * 60_000);

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    events = new EventRepository(database.dataSource);
  });

  beforeEach(async () => {
    await database.dataSource.query('DELETE FROM events');
  });

  afterAll(async () => {
    await database?.close();
  });

  it('appends in the caller’s transaction: a rolled-back change leaves no event, a committed one has it', async () => {
    await expect(
      database.transaction(async (manager) => {
        await events.append([revoked('ann', t0)], manager);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect((await events.page({}, 10)).events).toEqual([]);
    await database.transaction((manager) => events.append([revoked('ann', t0)], manager));
    expect((await events.page({}, 10)).events.map((e) => e.type)).toEqual(['grant.revoked']);
  });

  it('pages newest first with a cursor that stays stable while new events arrive, filtered by principal and time', async () => {
    await events.append(Array.from({ length: 5 }, (_, i) => revoked(i % 2 === 0 ? 'ann' : 'ben', at(i))));
    const first = await events.page({ principal: 'ann' }, 2);
    expect(first.events.map((e) => e.occurredAt.toISOString())).toEqual([at(4), at(2)].map((d) => d.toISOString()));
    // New events arrive between pages: the next page is unchanged.
    await events.append([revoked('ann', at(10)), revoked('ann', at(11))]);
    const second = await events.page({ principal: 'ann' }, 2, first.next ?? undefined);
    expect(second.events.map((e) => e.occurredAt.toISOString())).toEqual([at(0).toISOString()]);
    expect(second.next).toBeNull();
    expect((await events.page({ principal: 'ben' }, 10)).events).toHaveLength(2);
    expect((await events.page({ from: at(3), to: at(10) }, 10)).events.map((e) => e.occurredAt.toISOString())).toEqual(
      [at(4), at(3)].map((d) => d.toISOString()),
    );
    expect((await events.page({ types: ['grant.created'] }, 10)).events).toEqual([]);
  });

  it('stores details with quotes, backslashes, braces, commas and non-ASCII text as written, and nulls as null', async () => {
    const details = {
      approval_id: randomUUID(),
      tool_name: 'say "hi", {ok}\\ — ünïcødé ✓',
      risk_level: null,
      argument_names: ['a,b', 'c"d', '{e}'],
      arguments_sha256: 'ab'.repeat(32),
    };
    const event: AnyBrokerEvent = {
      type: 'approval.requested',
      actor: { type: 'gateway', id: null },
      principal: 'ann',
      agentId: null,
      serviceId: null,
      outcome: 'success',
      traceId: null,
      details,
    };
    await events.append([{ id: randomUUID(), occurredAt: t0, event }, revoked('ben', t0)]);
    const [stored] = (await events.page({ principal: 'ann' }, 1)).events;
    expect(stored).toMatchObject({
      type: 'approval.requested',
      actor: { type: 'gateway', id: null },
      agentId: null,
      serviceId: null,
      traceId: null,
      details,
    });
  });

  it('stores a caller’s NUL characters (which PostgreSQL text and jsonb refuse) as U+FFFD instead of failing the batch', async () => {
    const event: AnyBrokerEvent = {
      type: 'token.exchanged',
      actor: { type: 'gateway', id: 'gw\u0000x' },
      principal: 'ann\u0000',
      agentId: null,
      serviceId: null,
      outcome: 'failure',
      traceId: null,
      details: { resource: 'https://a.example\u0000/x', oauth_error: 'invalid_target' },
    };
    await events.append([{ id: randomUUID(), occurredAt: t0, event }, revoked('ben', t0)]);
    const stored = (await events.page({ principal: 'ann\uFFFD' }, 1)).events[0];
    expect(stored).toMatchObject({ actor: { id: 'gw\uFFFDx' }, details: { resource: 'https://a.example\uFFFD/x' } });
    expect((await events.page({}, 10)).events).toHaveLength(2);
  });

  it('answers last-used with each agent and service pair’s newest successful exchange of the person, whatever is newer', async () => {
    const agents = ['a', 'b', 'c', 'd', 'e'].map((c) => `00000000-0000-4000-8000-${c.repeat(12)}`);
    const services = ['1', '2', '3', '4'].map((c) => `00000000-0000-4000-9000-${c.repeat(12)}`);
    const written: EventToAppend[] = [];
    let minute = 0;
    const add = (event: Omit<AnyBrokerEvent, 'actor' | 'traceId' | 'details'> & { details?: unknown }): void => {
      minute += 1;
      const full = {
        actor: { type: 'gateway', id: 'gw' },
        traceId: null,
        details: { resource: 'https://api.example', oauth_error: null },
        ...event,
      } as AnyBrokerEvent;
      written.push({ id: randomUUID(), occurredAt: at(minute), event: full });
    };
    const exchange = (
      principal: string,
      agentId: string | null,
      serviceId: string | null,
      outcome: 'success' | 'failure',
    ): void =>
      add({
        type: 'token.exchanged',
        principal,
        agentId,
        serviceId,
        outcome,
        details: { resource: 'https://api.example', oauth_error: outcome === 'failure' ? 'invalid_grant' : null },
      });
    for (let round = 0; round < 3; round += 1) {
      agents.forEach((agent, a) =>
        services.forEach((service, s) => {
          // Some pairs only ever failed; the rest succeed, then (in the last round) fail after their last success.
          if ((a + s) % 3 === 0) exchange('ann', agent, service, 'failure');
          else if (round < 2 || (a * s) % 2 === 0) exchange('ann', agent, service, 'success');
          else exchange('ann', agent, service, 'failure');
          // Another person's newer successes and other kinds of the same pair never count for ann.
          if ((a + s) % 2 === 0) exchange('ben', agent, service, 'success');
          if (s === 1)
            add({
              type: 'grant.revoked',
              principal: 'ann',
              agentId: agent,
              serviceId: service,
              outcome: 'success',
              details: {},
            });
        }),
      );
    }
    exchange('ann', agents[0] as string, null, 'success');
    exchange('ann', null, services[0] as string, 'success');
    await events.append(written);

    const expected = new Map<string, { agentId: string; serviceId: string; lastUsedAt: Date }>();
    for (const { occurredAt, event } of written) {
      if (
        event.principal === 'ann' &&
        event.type === 'token.exchanged' &&
        event.outcome === 'success' &&
        event.agentId !== null &&
        event.serviceId !== null
      ) {
        expected.set(`${event.agentId}/${event.serviceId}`, {
          agentId: event.agentId,
          serviceId: event.serviceId,
          lastUsedAt: occurredAt,
        });
      }
    }
    const byPair = (x: { agentId: string; serviceId: string }, y: { agentId: string; serviceId: string }): number =>
      `${x.agentId}/${x.serviceId}`.localeCompare(`${y.agentId}/${y.serviceId}`);
    const answer = await events.lastUsed('ann');
    expect(answer.length).toBe(13);
    expect([...answer].sort(byPair)).toEqual([...expected.values()].sort(byPair));
    expect(await events.lastUsed('nobody')).toEqual([]);
  });

  it('pages by one or several kinds exactly as one newest-first list of the person’s events, with the other filters and the cursor', async () => {
    const kinds = ['grant.revoked', 'grant.created', 'session.disconnected', 'token.exchanged'] as const;
    const written: EventToAppend[] = [];
    for (let i = 0; i < 60; i += 1) {
      const type = kinds[(i * 7) % kinds.length] as (typeof kinds)[number];
      const principal = i % 5 === 0 ? 'ben' : 'ann';
      const agentId = i % 3 === 0 ? AGENT : null;
      const event = {
        type,
        actor: { type: 'principal', id: principal },
        principal,
        agentId,
        serviceId: null,
        outcome: 'success',
        traceId: null,
        details: {},
      } as unknown as AnyBrokerEvent;
      written.push({ id: randomUUID(), occurredAt: at(i), event });
    }
    await events.append(written);
    const walk = async (filter: Parameters<EventRepository['page']>[0], limit: number): Promise<string[]> => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await events.page(filter, limit, cursor);
        seen.push(...page.events.map((e) => e.id));
        cursor = page.next ?? undefined;
      } while (cursor !== undefined);
      return seen;
    };
    const expected = (keep: (e: EventToAppend) => boolean): string[] =>
      written
        .filter(keep)
        .map((e) => e.id)
        .reverse();
    const of =
      (principal: string, types: readonly string[]) =>
      (e: EventToAppend): boolean =>
        e.event.principal === principal && types.includes(e.event.type);
    expect(await walk({ principal: 'ann', types: ['grant.revoked'] }, 4)).toEqual(
      expected(of('ann', ['grant.revoked'])),
    );
    expect(await walk({ principal: 'ann', types: ['grant.revoked', 'session.disconnected'] }, 3)).toEqual(
      expected(of('ann', ['grant.revoked', 'session.disconnected'])),
    );
    // A kind named twice is still each event once.
    expect(await walk({ principal: 'ann', types: ['grant.created', 'token.exchanged', 'grant.created'] }, 5)).toEqual(
      expected(of('ann', ['grant.created', 'token.exchanged'])),
    );
    expect(await walk({ principal: 'ann', types: [...kinds], agentId: AGENT, from: at(10), to: at(50) }, 2)).toEqual(
      expected(
        (e) => of('ann', kinds)(e) && e.event.agentId === AGENT && e.occurredAt >= at(10) && e.occurredAt < at(50),
      ),
    );
    expect(await walk({ principal: 'ben', types: ['grant.revoked', 'token.exchanged'] }, 50)).toEqual(
      expected(of('ben', ['grant.revoked', 'token.exchanged'])),
    );
    expect(await walk({ principal: 'ann', types: ['approval.requested', 'grant.expired'] }, 10)).toEqual([]);
    // Without a principal (the admin list): every person's events of those kinds.
    expect(await walk({ types: ['grant.revoked', 'session.disconnected'] }, 7)).toEqual(
      expected((e) => ['grant.revoked', 'session.disconnected'].includes(e.event.type)),
    );
  });

  it('refuses to update a recorded event (append-only)', async () => {
    await events.append([revoked('ann', t0)]);
    await expect(database.dataSource.query("UPDATE events SET outcome = 'failure'")).rejects.toThrow(/append-only/);
  });

  it('purges only events older than the cutoff, in batches', async () => {
    await events.append([revoked('ann', at(0)), revoked('ann', at(1)), revoked('ann', at(2)), revoked('ann', at(30))]);
    expect(await events.purgeBefore(at(10), 2)).toBe(2);
    expect(await events.purgeBefore(at(10), 2)).toBe(1);
    expect(await events.purgeBefore(at(10), 2)).toBe(0);
    expect((await events.page({}, 10)).events.map((e) => e.occurredAt.toISOString())).toEqual([at(30).toISOString()]);
  });
});
