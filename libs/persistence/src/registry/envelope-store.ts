import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** A sealed column of the schema. */
export type EnvelopeColumn =
  | 'services.client_secret_envelope'
  | 'signing_keys.private_key_envelope'
  | 'third_party_sessions.access_token_envelope'
  | 'third_party_sessions.refresh_token_envelope'
  | 'webhooks.secret_envelope';

export const ENVELOPE_COLUMNS: readonly EnvelopeColumn[] = [
  'services.client_secret_envelope',
  'signing_keys.private_key_envelope',
  'third_party_sessions.access_token_envelope',
  'third_party_sessions.refresh_token_envelope',
  'webhooks.secret_envelope',
];

/** One sealed value with what its binding is made of. */
export interface StoredEnvelope {
  readonly key: string;
  readonly envelope: Buffer;
  readonly owner: {
    readonly serviceId?: string;
    readonly principal?: string;
    readonly kid?: string;
    readonly webhookId?: string;
  };
}

const SOURCES: Record<EnvelopeColumn, { table: string; column: string; key: string; owner: string }> = {
  'services.client_secret_envelope': {
    table: 'services',
    column: 'client_secret_envelope',
    key: 'id',
    owner: 'id AS service_id',
  },
  'signing_keys.private_key_envelope': {
    table: 'signing_keys',
    column: 'private_key_envelope',
    key: 'kid',
    owner: 'kid',
  },
  'third_party_sessions.access_token_envelope': {
    table: 'third_party_sessions',
    column: 'access_token_envelope',
    key: 'id',
    owner: 'service_id, principal',
  },
  'third_party_sessions.refresh_token_envelope': {
    table: 'third_party_sessions',
    column: 'refresh_token_envelope',
    key: 'id',
    owner: 'service_id, principal',
  },
  // Webhook signing secrets, rewrapped with the rest when the KEK rotates.
  'webhooks.secret_envelope': { table: 'webhooks', column: 'secret_envelope', key: 'id', owner: 'id AS webhook_id' },
};

/**
 * Batch access to every sealed value, for key-encryption-key rotation. Replacement is
 * optimistic (only when the stored envelope is still the one read), so it runs online:
 * a value rewritten meanwhile (a refresh, a new secret) is already under the current KEK.
 */
@Injectable()
export class EnvelopeStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Up to `limit` sealed values of `column` with keys after `afterKey`, in key order. */
  async batch(column: EnvelopeColumn, afterKey: string, limit: number): Promise<StoredEnvelope[]> {
    const source = SOURCES[column];
    const rows = await this.dataSource.query<Record<string, unknown>[]>(
      `SELECT ${source.key}::text AS key, ${source.column} AS envelope, ${source.owner} FROM ${source.table}
        WHERE ${source.column} IS NOT NULL AND ${source.key}::text > $1 ORDER BY ${source.key}::text LIMIT $2`,
      [afterKey, limit],
    );
    return rows.map((row) => ({
      key: row.key as string,
      envelope: row.envelope as Buffer,
      owner: {
        serviceId: row.service_id as string | undefined,
        principal: row.principal as string | undefined,
        kid: row.kid as string | undefined,
        webhookId: row.webhook_id as string | undefined,
      },
    }));
  }

  /** Replaces the envelope if it is still `previous`; false when it changed meanwhile. */
  async replace(column: EnvelopeColumn, key: string, previous: Buffer, next: Buffer): Promise<boolean> {
    const source = SOURCES[column];
    const result = await this.dataSource.query<[unknown[], number]>(
      `UPDATE ${source.table} SET ${source.column} = $3 WHERE ${source.key}::text = $1 AND ${source.column} = $2`,
      [key, previous, next],
    );
    return result[1] > 0;
  }
}
