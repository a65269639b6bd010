import { ApiError, parseRfc3339DateTime, type ApiErrorCode } from '@broker/domain';
import { EVENT_TYPES, type EventActorType, type EventType, type RecordedEvent } from '../catalogue/event-catalogue';

/**
 * The query both read sides of the ledger take (docs/events.md "Reading the ledger"): the end-user
 * server's `GET /api/activity` (always the caller's own events) and the admin server's
 * `GET /api/events` and its export (any principal's). Each app's DTO declares these fields
 * with its own documentation and `implements` this type; the rules (limit, cursor, kinds,
 * time range) and the parsing into an `EventFilter` are the ones below, shared.
 */
export interface EventQuery {
  /** The previous page's `next_cursor`, as received (opaque). */
  readonly cursor?: string;
  /** Events per page, `1`-`MAX_EVENT_LIMIT` (default `DEFAULT_EVENT_LIMIT`). */
  readonly limit?: number;
  readonly agent_id?: string;
  readonly service_id?: string;
  readonly type?: EventType[];
  /** RFC 3339: events that happened at or after it. */
  readonly from?: string;
  /** RFC 3339: events that happened before it, after `from`. */
  readonly to?: string;
}

/** What a page of the ledger is filtered by; every field optional. */
export interface EventFilter {
  /** Only this person's events (the end-user API always sets it to the caller). */
  readonly principal?: string;
  /** Only events this kind of actor caused (the admin overview's administrators' actions). */
  readonly actorType?: EventActorType;
  readonly agentId?: string;
  readonly serviceId?: string;
  readonly types?: readonly EventType[];
  /** occurred_at >= from */
  readonly from?: Date;
  /** occurred_at < to */
  readonly to?: Date;
}

/** A page, newest first; `next` is the cursor of the following (older) page, null at the end. */
export interface EventPage {
  readonly events: RecordedEvent[];
  readonly next: string | null;
}

/** A page holds 1-100 events, 50 unless `limit` says otherwise. */
export const DEFAULT_EVENT_LIMIT = 50;
export const MAX_EVENT_LIMIT = 100;

/** The cursor a page's `next_cursor` carries: opaque to clients, a ledger position here (at most 18 digits: inside PostgreSQL's bigint). */
export const EVENT_CURSOR = /^[1-9][0-9]{0,17}$/;
export const EVENT_CURSOR_MESSAGE = 'cursor must be a next_cursor value of a previous page';

/** The `type` filter's refusal: each value must be a kind of the catalogue. */
export const EVENT_TYPE_MESSAGE = `each type must be one of ${EVENT_TYPES.join(', ')}`;

/** `?type=a&type=b` and `?type=a,b` alike, de-duplicated; anything that is not text is left for the validator to refuse. */
export function eventTypeList({ value }: { value: unknown }): unknown[] {
  const values = (Array.isArray(value) ? (value as unknown[]) : [value]).flatMap((item) =>
    typeof item === 'string' ? item.split(',') : [item],
  );
  return [...new Set(values)];
}

/** A decimal `limit` as a number; anything else stays as sent, for `@IsInt` to refuse. */
export function decimalLimit({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^[0-9]{1,6}$/.test(value) ? Number(value) : value;
}

/**
 * The query's filters (the DTO has checked every value) as the repository takes them: `to`
 * must come after `from`, else `invalid` (the app's own code for a bad request) naming `to`.
 */
export function eventFilter(query: EventQuery, invalid: ApiErrorCode): EventFilter {
  const from = query.from === undefined ? undefined : parseRfc3339DateTime(query.from);
  const to = query.to === undefined ? undefined : parseRfc3339DateTime(query.to);
  if (from !== undefined && to !== undefined && to.getTime() <= from.getTime()) {
    throw new ApiError(invalid, 'to must be after from', [{ field: 'to', problem: 'must be after from' }]);
  }
  return {
    ...(query.agent_id === undefined ? {} : { agentId: query.agent_id }),
    ...(query.service_id === undefined ? {} : { serviceId: query.service_id }),
    ...(query.type === undefined ? {} : { types: query.type }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
  };
}
