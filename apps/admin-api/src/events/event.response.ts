import { ApiProperty } from '@nestjs/swagger';
import {
  EVENT_ACTOR_TYPES,
  EVENT_OUTCOMES,
  EVENT_TYPES,
  type EventActorType,
  type EventOutcome,
  type EventType,
  type RecordedEvent,
} from '@broker/events';

/** Who did it. */
export class EventActorResponse {
  @ApiProperty({ enum: EVENT_ACTOR_TYPES })
  type!: EventActorType;
  /** The principal, agent id, gateway `sub` or admin principal; null for the broker itself. */
  @ApiProperty({ type: String, nullable: true })
  id!: string | null;
}

/** One ledger event as admins read it: a list item of `GET /api/events` and one line of its export. */
export class EventResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ enum: EVENT_TYPES })
  type!: EventType;
  @ApiProperty({ format: 'date-time' })
  occurred_at!: string;
  actor!: EventActorResponse;
  /** The person whose delegation or data it concerns; null for the registry's admin writes. */
  @ApiProperty({ type: String, nullable: true })
  principal!: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  agent_id!: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  service_id!: string | null;
  @ApiProperty({ enum: EVENT_OUTCOMES })
  outcome!: EventOutcome;
  /** The trace id of the request that caused it (its `traceresponse`); null for the broker's own background work. */
  @ApiProperty({ type: String, nullable: true })
  trace_id!: string | null;
  /** The kind's own fields (docs/events.md): identifiers and outcomes, never a credential or an approval argument's value. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  details!: Record<string, unknown>;
}

/** Answer of `GET /api/events`: a page, newest first, as `{items}` like the admin server's other lists. */
export class EventListResponse {
  @ApiProperty()
  items!: EventResponse[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  @ApiProperty({ type: String, nullable: true })
  next_cursor!: string | null;
}

export function toEventResponse(event: RecordedEvent): EventResponse {
  return {
    id: event.id,
    type: event.type,
    occurred_at: event.occurredAt.toISOString(),
    actor: { type: event.actor.type, id: event.actor.id },
    principal: event.principal,
    agent_id: event.agentId,
    service_id: event.serviceId,
    outcome: event.outcome,
    trace_id: event.traceId,
    details: event.details as Record<string, unknown>,
  };
}
