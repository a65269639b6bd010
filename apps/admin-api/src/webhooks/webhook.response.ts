import { type EventType } from '@broker/events';
import type { WebhookDeliveryRecord, WebhookDeliveryStatus, WebhookRecord } from '@broker/persistence';
import { ApiProperty } from '@nestjs/swagger';

/** A webhook as read back: never its secret. */
export class WebhookResponse {
  @ApiProperty({ example: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d', format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'https://siem.example.com/hooks/identity-broker', format: 'uri' })
  url!: string;
  @ApiProperty({
    example: ['grant.created', 'grant.revoked', 'agent.suspended'],
    type: 'array',
    items: { type: 'string' },
  })
  event_types!: EventType[];
  @ApiProperty({ example: true })
  enabled!: boolean;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  created_at!: string;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
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
  @ApiProperty({ example: '9e8d7c6b-5a4f-4e3d-b2c1-a0f9e8d7c6b5', format: 'uuid' })
  id!: string;
  /** The event's id, sent as `webhook-id`. */
  @ApiProperty({ example: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', format: 'uuid' })
  event_id!: string;
  @ApiProperty({ example: 'grant.revoked' })
  event_type!: string;
  @ApiProperty({ example: 'delivered', enum: ['pending', 'delivered', 'failed'] })
  status!: WebhookDeliveryStatus;
  /** Attempts made so far (an attempt is counted when it starts). */
  @ApiProperty({ example: 1, type: 'integer', minimum: 0 })
  attempts!: number;
  /** When it is tried next; null unless pending. */
  @ApiProperty({ example: null, type: 'string', format: 'date-time', nullable: true })
  next_attempt_at!: string | null;
  /** The receiver's last HTTP status; null when there was no answer. */
  @ApiProperty({ example: 204, type: 'integer', nullable: true })
  last_status!: number | null;
  /** Why the last attempt failed (short; never the receiver's answer). */
  @ApiProperty({ example: null, type: 'string', nullable: true })
  last_error!: string | null;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  created_at!: string;
  @ApiProperty({ example: '2026-11-02T14:05:01.000Z', type: 'string', format: 'date-time', nullable: true })
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
