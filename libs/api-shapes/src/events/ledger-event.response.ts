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
  /**
   * The principal, the agent's id, the gateway's `sub` or the administrator's principal; null for the broker
   * itself. A person's own activity names only agents, gateways and the person: null there for anyone else.
   */
  @ApiProperty({ type: String, nullable: true })
  id!: string | null;
}

/**
 * One ledger event (docs/events.md) as both read sides show it: the admin server's `GET /api/events`
 * adds the subject principal, a person's `GET /api/activity` shows the actor as its subject may see it.
 */
export abstract class LedgerEventResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ enum: EVENT_TYPES })
  type!: EventType;
  @ApiProperty({ format: 'date-time' })
  occurred_at!: string;
  actor!: EventActorResponse;
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

/** The event's shared fields; `actorId` is the actor's id as the reader may see it (the recorded one by default). */
export function toLedgerEventResponse(event: RecordedEvent, actorId = event.actor.id): LedgerEventResponse {
  return {
    id: event.id,
    type: event.type,
    occurred_at: event.occurredAt.toISOString(),
    actor: { type: event.actor.type, id: actorId },
    agent_id: event.agentId,
    service_id: event.serviceId,
    outcome: event.outcome,
    trace_id: event.traceId,
    details: event.details as Record<string, unknown>,
  };
}
