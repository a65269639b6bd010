import { randomUUID } from 'node:crypto';
import type { AnyBrokerEvent } from '@broker/domain';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { EventRepository, type EventToAppend } from './event.repository';

const AGENT = randomUUID();

function revoked(principal: string, occurredAt: Date): EventToAppend {
  const event: AnyBrokerEvent = { type: 'grant.revoked', actor: { type: 'principal', id: principal }, principal, agentId: AGENT, serviceId: null, outcome: 'success', traceId: null, details: {} };
  return { id: randomUUID(), occurredAt, event };
}

describe.each(testBackends())('EventRepository (issue 17 activity ledger) on $name', (backend) => {
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
    expect((await events.page({ from: at(3), to: at(10) }, 10)).events.map((e) => e.occurredAt.toISOString())).toEqual([at(4), at(3)].map((d) => d.toISOString()));
    expect((await events.page({ types: ['grant.created'] }, 10)).events).toEqual([]);
  });

  it('stores details with quotes, backslashes, braces, commas and non-ASCII text as written, and nulls as null', async () => {
    const details = { approval_id: randomUUID(), tool_name: 'say "hi", {ok}\\ — ünïcødé ✓', risk_level: null, argument_names: ['a,b', 'c"d', '{e}'], arguments_sha256: 'ab'.repeat(32) };
    const event: AnyBrokerEvent = { type: 'approval.requested', actor: { type: 'gateway', id: null }, principal: 'ann', agentId: null, serviceId: null, outcome: 'success', traceId: null, details };
    await events.append([{ id: randomUUID(), occurredAt: t0, event }, revoked('ben', t0)]);
    const [stored] = (await events.page({ principal: 'ann' }, 1)).events;
    expect(stored).toMatchObject({ type: 'approval.requested', actor: { type: 'gateway', id: null }, agentId: null, serviceId: null, traceId: null, details });
  });

  it('stores a caller’s NUL characters (which PostgreSQL text and jsonb refuse) as U+FFFD instead of failing the batch', async () => {
    const event: AnyBrokerEvent = { type: 'token.exchanged', actor: { type: 'gateway', id: 'gw\u0000x' }, principal: 'ann\u0000', agentId: null, serviceId: null, outcome: 'failure', traceId: null, details: { resource: 'https://a.example\u0000/x', oauth_error: 'invalid_target' } };
    await events.append([{ id: randomUUID(), occurredAt: t0, event }, revoked('ben', t0)]);
    const stored = (await events.page({ principal: 'ann\uFFFD' }, 1)).events[0];
    expect(stored).toMatchObject({ actor: { id: 'gw\uFFFDx' }, details: { resource: 'https://a.example\uFFFD/x' } });
    expect((await events.page({}, 10)).events).toHaveLength(2);
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
