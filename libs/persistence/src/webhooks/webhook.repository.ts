import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { type EventType } from '@broker/events';

/** A webhook endpoint as admins see it (never its secret). */
export interface WebhookRecord {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: readonly EventType[];
  readonly enabled: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What an admin writes, except the secret. */
export interface WebhookInput {
  readonly url: string;
  readonly eventTypes: readonly EventType[];
  readonly enabled: boolean;
}

/** Where a delivery stands. */
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One row of the outbox, as admins see it (the payload stays in). */
export interface WebhookDeliveryRecord {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly status: WebhookDeliveryStatus;
  readonly attempts: number;
  readonly nextAttemptAt: Date;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly deliveredAt: Date | null;
}

interface WebhookRow {
  id: string;
  url: string;
  event_types: EventType[];
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

const WEBHOOK_COLUMNS = 'id, url, event_types, enabled, created_at, updated_at';
const DELIVERY_COLUMNS =
  'id, event_id, event_type, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at';

function toWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types,
    enabled: row.enabled,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toDelivery(row: DeliveryRow): WebhookDeliveryRecord {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  };
}

/**
 * Webhook endpoints (admin CRUD) and the read side of their outbox. The
 * secret is written sealed (an envelope of the vault's cipher) and never read back here:
 * only the delivery worker's claim opens it (`WebhookDeliveryRepository`).
 */
@Injectable()
export class WebhookRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async create(id: string, input: WebhookInput, secretEnvelope: Buffer, now: Date): Promise<WebhookRecord> {
    const [row] = await this.dataSource.query<WebhookRow[]>(
      `INSERT INTO webhooks (id, url, event_types, secret_envelope, enabled, created_at, updated_at) VALUES ($1, $2, $3::text[], $4, $5, $6, $6) RETURNING ${WEBHOOK_COLUMNS}`,
      [id, input.url, input.eventTypes, secretEnvelope, input.enabled, now],
    );
    return toWebhook(row as WebhookRow);
  }

  async list(): Promise<WebhookRecord[]> {
    const rows = await this.dataSource.query<WebhookRow[]>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks ORDER BY created_at, id`,
    );
    return rows.map(toWebhook);
  }

  async findById(id: string): Promise<WebhookRecord | undefined> {
    const [row] = await this.dataSource.query<WebhookRow[]>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1`, [
      id,
    ]);
    return row === undefined ? undefined : toWebhook(row);
  }

  /** Replaces URL, event types and enabled; undefined when there is no such webhook. */
  async replace(id: string, input: WebhookInput, now: Date): Promise<WebhookRecord | undefined> {
    const [rows] = await this.dataSource.query<[WebhookRow[], number]>(
      `UPDATE webhooks SET url = $2, event_types = $3::text[], enabled = $4, updated_at = $5 WHERE id = $1 RETURNING ${WEBHOOK_COLUMNS}`,
      [id, input.url, input.eventTypes, input.enabled, now],
    );
    const row = rows[0];
    return row === undefined ? undefined : toWebhook(row);
  }

  /** Replaces the sealed secret (rotation); false when there is no such webhook. */
  async replaceSecret(id: string, secretEnvelope: Buffer, now: Date): Promise<boolean> {
    const [, count] = await this.dataSource.query<[unknown[], number]>(
      'UPDATE webhooks SET secret_envelope = $2, updated_at = $3 WHERE id = $1',
      [id, secretEnvelope, now],
    );
    return count > 0;
  }

  /** Deletes the webhook and its deliveries (cascade); false when there is no such webhook. */
  async delete(id: string): Promise<boolean> {
    const [, count] = await this.dataSource.query<[unknown[], number]>('DELETE FROM webhooks WHERE id = $1', [id]);
    return count > 0;
  }

  /** The webhook's latest `limit` deliveries, newest first (pending, delivered and failed). */
  async deliveries(webhookId: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    const rows = await this.dataSource.query<DeliveryRow[]>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id LIMIT $2`,
      [webhookId, limit],
    );
    return rows.map(toDelivery);
  }
}
