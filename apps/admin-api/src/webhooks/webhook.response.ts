import { type EventType } from '@broker/events';
import type { WebhookDeliveryRecord, WebhookDeliveryStatus, WebhookRecord } from '@broker/persistence';
import { ApiProperty } from '@nestjs/swagger';

/** A webhook as read back: never its secret. */
export class WebhookResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ format: 'uri' })
  url!: string;
  @ApiProperty({ type: 'array', items: { type: 'string' } })
  event_types!: EventType[];
  @ApiProperty()
  enabled!: boolean;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

/** A webhook with its secret: only in the answer that created or rotated it. */
export class WebhookWithSecretResponse extends WebhookResponse {
  /** `whsec_` and the key's bytes in base64 (Standard Webhooks). Shown once: store it now. */
  @ApiProperty({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' })
  secret!: string;
}

/** One delivery of an event to a webhook (the outbox row, without the payload). */
export class WebhookDeliveryResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  /** The event's id, sent as `webhook-id`. */
  @ApiProperty({ format: 'uuid' })
  event_id!: string;
  @ApiProperty()
  event_type!: string;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] })
  status!: WebhookDeliveryStatus;
  /** Attempts made so far (an attempt is counted when it starts). */
  @ApiProperty({ type: 'integer', minimum: 0 })
  attempts!: number;
  /** When it is tried next; null unless pending. */
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  next_attempt_at!: string | null;
  /** The receiver's last HTTP status; null when there was no answer. */
  @ApiProperty({ type: 'integer', nullable: true })
  last_status!: number | null;
  /** Why the last attempt failed (short; never the receiver's answer). */
  @ApiProperty({ type: 'string', nullable: true })
  last_error!: string | null;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  delivered_at!: string | null;
}

export function toWebhookResponse(webhook: WebhookRecord): WebhookResponse {
  return {
    id: webhook.id,
    url: webhook.url,
    event_types: [...webhook.eventTypes],
    enabled: webhook.enabled,
    created_at: webhook.createdAt.toISOString(),
    updated_at: webhook.updatedAt.toISOString(),
  };
}

export function toWebhookWithSecretResponse(webhook: WebhookRecord, secret: string): WebhookWithSecretResponse {
  return { ...toWebhookResponse(webhook), secret };
}

export function toWebhookDeliveryResponse(delivery: WebhookDeliveryRecord): WebhookDeliveryResponse {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
    last_status: delivery.lastStatus,
    last_error: delivery.lastError,
    created_at: delivery.createdAt.toISOString(),
    delivered_at: delivery.deliveredAt?.toISOString() ?? null,
  };
}
