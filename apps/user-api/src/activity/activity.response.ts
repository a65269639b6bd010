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

/** Who did it, as the person sees it. */
export class ActivityActor {
  @ApiProperty({ enum: EVENT_ACTOR_TYPES })
  type!: EventActorType;
  /**
   * The agent id, the gateway's `sub`, or the caller's own principal; null for the broker
   * itself, and for an administrator or another person (never shown to the person).
   */
  @ApiProperty({ type: String, nullable: true })
  id!: string | null;
}

/** One event of the caller's activity; the subject is the caller, so it is not repeated. */
export class ActivityEvent {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ enum: EVENT_TYPES })
  type!: EventType;
  @ApiProperty({ format: 'date-time' })
  occurred_at!: string;
  actor!: ActivityActor;
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

/** Answer of `GET /api/activity`: a page, newest first. */
export class ActivityListResponse {
  data!: ActivityEvent[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  @ApiProperty({ type: String, nullable: true })
  next_cursor!: string | null;
}

/**
 * The event as its subject sees it. The activity API never names another
 * person: an actor that is an administrator or another principal is shown by its type alone.
 */
export function toActivityEvent(event: RecordedEvent, caller: string): ActivityEvent {
  const { actor } = event;
  const named =
    actor.type === 'agent' || actor.type === 'gateway' || (actor.type === 'principal' && actor.id === caller);
  return {
    id: event.id,
    type: event.type,
    occurred_at: event.occurredAt.toISOString(),
    actor: { type: actor.type, id: named ? actor.id : null },
    agent_id: event.agentId,
    service_id: event.serviceId,
    outcome: event.outcome,
    trace_id: event.traceId,
    details: event.details as Record<string, unknown>,
  };
}
