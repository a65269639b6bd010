import type { EventFilter, EventPage, EventPurge, EventStore, EventToAppend, RecordedEvent } from '@broker/events';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { active } from '../registry/grant.repository';
import { withWebhookDeliveries } from '../webhooks/webhook-payload';

interface EventRow {
  seq: string;
  id: string;
  type: string;
  occurred_at: Date;
  actor_type: string;
  actor_id: string | null;
  principal: string | null;
  agent_id: string | null;
  service_id: string | null;
  outcome: string;
  trace_id: string | null;
  details: unknown;
}

/** An agent's newest successful use of a service for one person. */
export interface LastUsed {
  readonly agentId: string;
  readonly serviceId: string;
  readonly lastUsedAt: Date;
}

/** An agent that appears in a person's activity and still exists: its name, and whether the person allows it now. */
export interface HistoryAgent {
  readonly agentId: string;
  readonly displayName: string;
  /** The person has an active grant for it (false: revoked, expired, or never granted). */
  readonly allowed: boolean;
}

const COLUMNS =
  'seq::text AS seq, id, type, occurred_at, actor_type, actor_id, principal, agent_id, service_id, outcome, trace_id, details';
/** The events of one batch, as 11 arrays of equal length (see `append`). */
const INSERT_EVENTS = `INSERT INTO events (id, type, occurred_at, actor_type, actor_id, principal, agent_id, service_id, outcome, trace_id, details)
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::uuid[], $8::uuid[], $9::text[], $10::text[], $11::jsonb[])`;
/** Rows per INSERT statement (bounds one statement's arrays). */
const INSERT_CHUNK = 500;

/**
 * PostgreSQL text and jsonb cannot hold U+0000, and a caller's text (a principal claim, a
 * form's `resource`) may: it is stored as U+FFFD, so the event is kept and the batch it is
 * in is not refused.
 */
function text(value: string | null): string | null {
  return value !== null && value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
}

function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? text(value) : value;
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    seq: row.seq,
    id: row.id,
    occurredAt: row.occurred_at,
    type: row.type,
    actor: { type: row.actor_type, id: row.actor_id },
    principal: row.principal,
    agentId: row.agent_id,
    serviceId: row.service_id,
    outcome: row.outcome,
    traceId: row.trace_id,
    details: row.details,
  } as RecordedEvent;
}

/**
 * The activity ledger's table (the schema's home is here; the ledger itself, its catalogue
 * and the query types are @broker/events'). `append` writes with the caller's transaction
 * manager when given, so a state change and its event commit or roll back together; the
 * hot path's batches append without one. Rows are never updated (a trigger refuses it);
 * `purgeBefore` deletes old ones in small batches (retention).
 */
@Injectable()
export class EventRepository implements EventStore, EventPurge {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Inserts the events (multi-row INSERTs), in `manager`'s transaction when given. */
  async append(events: readonly EventToAppend[], manager?: EntityManager): Promise<void> {
    const runner = manager ?? this.dataSource.manager;
    for (let first = 0; first < events.length; first += INSERT_CHUNK) {
      const chunk = events.slice(first, first + INSERT_CHUNK);
      // One array per column and `unnest`: the statement's text and its 11 parameters are the same for any number of
      // rows (PostgreSQL parses a short statement, not one with 11 placeholders a row), which halves the ledger's
      // write cost on the hot path's batches.
      const columns: unknown[][] = Array.from({ length: 11 }, () => []);
      for (const { id, occurredAt, event } of chunk) {
        const row = [
          id,
          event.type,
          occurredAt,
          event.actor.type,
          text(event.actor.id),
          text(event.principal),
          event.agentId,
          event.serviceId,
          event.outcome,
          text(event.traceId),
          JSON.stringify(event.details, withoutNul),
        ];
        row.forEach((value, column) => (columns[column] as unknown[]).push(value));
      }
      // The same statement writes the webhook outbox's deliveries of these events.
      await runner.query(withWebhookDeliveries(INSERT_EVENTS), columns);
    }
  }

  /**
   * One page, newest first (by `seq`: the order events were written), `before` the cursor
   * of the previous page: events written meanwhile land above the first page and never
   * shift the pages after it.
   */
  async page(filter: EventFilter, limit: number, before?: string): Promise<EventPage> {
    const where: string[] = [];
    const values: unknown[] = [];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    if (filter.principal !== undefined) where.push(`principal = ${param(filter.principal)}`);
    if (filter.actorType !== undefined) where.push(`actor_type = ${param(filter.actorType)}`);
    if (filter.agentId !== undefined) where.push(`agent_id = ${param(filter.agentId)}`);
    if (filter.serviceId !== undefined) where.push(`service_id = ${param(filter.serviceId)}`);
    if (filter.from !== undefined) where.push(`occurred_at >= ${param(filter.from)}`);
    if (filter.to !== undefined) where.push(`occurred_at < ${param(filter.to)}`);
    if (before !== undefined) where.push(`seq < ${param(before)}::bigint`);
    const take = param(limit + 1);
    const types = [...new Set(filter.types ?? [])];
    const conditions = (extra: string[]): string =>
      where.length + extra.length > 0 ? `WHERE ${[...where, ...extra].join(' AND ')}` : '';
    let sql: string;
    if (filter.principal !== undefined && types.length > 1) {
      // A person's page of several kinds: the newest of each kind (one range of
      // `events_principal_type_seq_idx` each, in `seq` order) merged, instead of `type = ANY(...)`,
      // which that index answers in kind order only (every event of those kinds read and sorted).
      const branches = types.map(
        (type) => `(SELECT * FROM events ${conditions([`type = ${param(type)}`])} ORDER BY seq DESC LIMIT ${take})`,
      );
      sql = `SELECT ${COLUMNS} FROM (${branches.join(' UNION ALL ')}) AS events ORDER BY events.seq DESC LIMIT ${take}`;
    } else {
      const kinds =
        types.length === 0
          ? []
          : types.length === 1
            ? [`type = ${param(types[0])}`]
            : [`type = ANY(${param(types)}::text[])`];
      // `events.seq`: a bare `seq` would sort the selected `seq::text` alias ('999' above '1000') and skip events between pages.
      sql = `SELECT ${COLUMNS} FROM events ${conditions(kinds)} ORDER BY events.seq DESC LIMIT ${take}`;
    }
    const rows = await this.dataSource.query<EventRow[]>(sql, values);
    const events = rows.slice(0, limit).map(toRecorded);
    return { events, next: rows.length > limit ? (events[events.length - 1]?.seq ?? null) : null };
  }

  /**
   * When each of the person's agents last used each service (its newest successful token
   * exchange), one row per agent and service, for the agents page. A loose
   * index scan of `events_last_used_idx`: the first pair's newest row, then the newest row of
   * the next pair above it, and so on; one index descent a pair, where `DISTINCT ON` would read
   * and sort every successful exchange of the person.
   */
  async lastUsed(principal: string): Promise<LastUsed[]> {
    const used = "type = 'token.exchanged' AND outcome = 'success' AND agent_id IS NOT NULL AND service_id IS NOT NULL";
    const rows = await this.dataSource.query<{ agent_id: string; service_id: string; occurred_at: Date }[]>(
      `WITH RECURSIVE pairs AS (
        (SELECT agent_id, service_id, occurred_at FROM events WHERE principal = $1 AND ${used} ORDER BY agent_id, service_id, seq DESC LIMIT 1)
        UNION ALL
        SELECT newest.agent_id, newest.service_id, newest.occurred_at FROM pairs CROSS JOIN LATERAL (
          SELECT agent_id, service_id, occurred_at FROM events
          WHERE principal = $1 AND ${used} AND (events.agent_id, events.service_id) > (pairs.agent_id, pairs.service_id)
          ORDER BY agent_id, service_id, seq DESC LIMIT 1
        ) AS newest
      ) SELECT agent_id, service_id, occurred_at FROM pairs`,
      [principal],
    );
    return rows.map((row) => ({
      agentId: row.agent_id,
      serviceId: row.service_id,
      lastUsedAt: new Date(row.occurred_at),
    }));
  }

  /**
   * The agents of the person's activity that still exist, by display name, each with whether the person has an
   * active grant for it at `now`: a revoked agent stays, since its history does. Read through the two activity
   * indexes, never every event of the person: the agents of successful exchanges by a loose scan of
   * `events_last_used_idx` (one index descent an agent), those of every other kind from
   * `events_principal_type_seq_idx`. A refused exchange alone does not name an agent here.
   */
  async historyAgents(principal: string, now: Date): Promise<HistoryAgent[]> {
    const used = "type = 'token.exchanged' AND outcome = 'success' AND agent_id IS NOT NULL AND service_id IS NOT NULL";
    const rows = await this.dataSource.query<{ agent_id: string; display_name: string; allowed: boolean }[]>(
      `WITH RECURSIVE exchanged AS (
        (SELECT agent_id FROM events WHERE principal = $1 AND ${used} ORDER BY agent_id LIMIT 1)
        UNION ALL
        SELECT next.agent_id FROM exchanged CROSS JOIN LATERAL (
          SELECT agent_id FROM events
          WHERE principal = $1 AND ${used} AND events.agent_id > exchanged.agent_id
          ORDER BY agent_id LIMIT 1
        ) AS next
      ), named AS (
        SELECT agent_id FROM exchanged
        UNION
        SELECT agent_id FROM events
        WHERE principal = $1 AND principal IS NOT NULL AND type <> 'token.exchanged' AND agent_id IS NOT NULL
      )
      SELECT a.id AS agent_id, a.display_name,
             EXISTS (SELECT 1 FROM grants g WHERE g.principal = $1 AND g.agent_id = a.id AND ${active(2)}) AS allowed
        FROM named JOIN agents a ON a.id = named.agent_id
       ORDER BY a.display_name COLLATE "C", a.id`,
      [principal, now],
    );
    return rows.map((row) => ({ agentId: row.agent_id, displayName: row.display_name, allowed: row.allowed }));
  }

  /** Deletes up to `batch` events that happened before `cutoff`, oldest first; returns how many (call again until 0). */
  async purgeBefore(cutoff: Date, batch: number): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown[], number]>(
      'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE occurred_at < $1 ORDER BY seq LIMIT $2)',
      [cutoff, batch],
    );
    return count;
  }
}
