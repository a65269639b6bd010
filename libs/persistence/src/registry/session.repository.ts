import type { DataSource } from 'typeorm';

/** A stored third-party session; tokens stay sealed. */
export interface ThirdPartySessionRecord {
  readonly id: string;
  readonly principal: string;
  readonly serviceId: string;
  readonly accessTokenEnvelope: Buffer;
  readonly refreshTokenEnvelope: Buffer | null;
  readonly tokenType: string;
  readonly scopes: readonly string[];
  readonly accessTokenExpiresAt: Date | null;
  readonly refreshTokenExpiresAt: Date | null;
  readonly initiatedAt: Date;
  readonly updatedAt: Date;
}

/** Third-party sessions, one per (principal, service). */
export class SessionRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Which of `serviceIds` the principal has a stored session with. */
  async connectedServiceIds(principal: string, serviceIds: readonly string[]): Promise<Set<string>> {
    if (serviceIds.length === 0) return new Set();
    const rows = await this.dataSource.query<{ service_id: string }[]>('SELECT service_id FROM third_party_sessions WHERE principal = $1 AND service_id = ANY($2)', [principal, serviceIds]);
    return new Set(rows.map((row) => row.service_id));
  }

  /** Stores the session, replacing the principal's previous one for the service in place. */
  async upsert(session: ThirdPartySessionRecord): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO third_party_sessions (id, principal, service_id, access_token_envelope, refresh_token_envelope, token_type, scopes, access_token_expires_at, refresh_token_expires_at, initiated_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (principal, service_id) DO UPDATE SET
         access_token_envelope = EXCLUDED.access_token_envelope, refresh_token_envelope = EXCLUDED.refresh_token_envelope,
         token_type = EXCLUDED.token_type, scopes = EXCLUDED.scopes, access_token_expires_at = EXCLUDED.access_token_expires_at,
         refresh_token_expires_at = EXCLUDED.refresh_token_expires_at, initiated_at = EXCLUDED.initiated_at, updated_at = EXCLUDED.updated_at`,
      [
        session.id,
        session.principal,
        session.serviceId,
        session.accessTokenEnvelope,
        session.refreshTokenEnvelope,
        session.tokenType,
        JSON.stringify(session.scopes),
        session.accessTokenExpiresAt,
        session.refreshTokenExpiresAt,
        session.initiatedAt,
        session.updatedAt,
      ],
    );
  }
}
