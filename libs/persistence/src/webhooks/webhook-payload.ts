/**
 * The body a webhook receives for an event, fixed when the event is
 * recorded (the outbox keeps it, so every retry sends the same content). The Standard
 * Webhooks payload shape: `type`, `timestamp` (when it happened) and `data`, the event as
 * the ledger records it (identifiers, outcome, typed details; never a credential):
 *
 * `{"type", "timestamp", "data": {"id", "type", "occurred_at", "actor": {"type", "id"},
 * "principal", "agent_id", "service_id", "outcome", "trace_id", "details"}}`
 */
const UTC_TIME = `to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Wraps the ledger's `INSERT INTO events … VALUES …` so the same statement fills the
 * outbox: one delivery per enabled webhook subscribed to the event's type, its payload
 * built from the row just written. One statement, so the deliveries commit or roll back
 * with their events even on the hot path's batches (no transaction of their own), and no
 * extra round trip; without webhooks the join is empty and nothing more is written.
 */
export function withWebhookDeliveries(insertEvents: string): string {
  return `WITH e AS (${insertEvents} RETURNING id, type, occurred_at, actor_type, actor_id, principal, agent_id, service_id, outcome, trace_id, details)
INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
SELECT w.id, e.id, e.type,
       jsonb_build_object('type', e.type, 'timestamp', ${UTC_TIME}, 'data', jsonb_build_object(
         'id', e.id, 'type', e.type, 'occurred_at', ${UTC_TIME},
         'actor', jsonb_build_object('type', e.actor_type, 'id', e.actor_id),
         'principal', e.principal, 'agent_id', e.agent_id, 'service_id', e.service_id,
         'outcome', e.outcome, 'trace_id', e.trace_id, 'details', e.details)),
       e.occurred_at, e.occurred_at
  FROM e
  JOIN webhooks w ON w.enabled AND e.type = ANY(w.event_types)`;
}
