import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import type { ThirdPartySessionRecord } from '../registry/session.repository';

/** The states of an authorization request (docs/authorization-requests.md). */
export type AuthorizationRequestStatus = 'pending' | 'completed' | 'denied' | 'expired';

/** One authorization request as stored. */
export interface AuthorizationRequestRecord {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly serviceId: string;
  /** The requested scopes, sorted (empty: the request named none). */
  readonly scopes: readonly string[];
  /** The agent's permission sets naming the service when the request was made: what Allow delegates. */
  readonly permissionSetIds: readonly string[];
  readonly needsGrant: boolean;
  readonly needsConnection: boolean;
  readonly status: AuthorizationRequestStatus;
  readonly allowedAt: Date | null;
  readonly answeredAt: Date | null;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  /** The gateway's client assertion `sub`. */
  readonly createdBy: string | null;
}

/** What a refused exchange asks for. */
export interface NewAuthorizationRequest {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly serviceId: string;
  readonly scopes: readonly string[];
  readonly permissionSetIds: readonly string[];
  readonly needsGrant: boolean;
  readonly needsConnection: boolean;
  readonly expiresAt: Date;
  readonly createdBy: string | null;
}

/** `authorization_requests.rate_limit`. */
export interface AuthorizationRequestLimits {
  readonly maxPendingPerPrincipal: number;
  readonly maxRequestsPerMinute: number;
}

/** The outcome of a create: the pending request of the key (new or the one already there), or a limit reached. */
export type AuthorizationRequestCreate =
  | {
      readonly kind: 'created';
      readonly record: AuthorizationRequestRecord;
      readonly expired: readonly AuthorizationRequestRecord[];
    }
  | {
      readonly kind: 'existing';
      readonly record: AuthorizationRequestRecord;
      readonly expired: readonly AuthorizationRequestRecord[];
    }
  | { readonly kind: 'rate_limited'; readonly expired: readonly AuthorizationRequestRecord[] };

/** A request and the sync counter, read together (the gateway's wait). */
export interface AuthorizationRequestState {
  readonly version: number;
  readonly record: AuthorizationRequestRecord | undefined;
}

/** A permission set of an agent that names a service, with the scopes it offers for it. */
export interface OfferedPermissionSet {
  readonly permissionSetId: string;
  readonly scopes: readonly string[];
}

interface Row {
  id: string;
  principal: string;
  agent_id: string;
  service_id: string;
  scopes: string;
  permission_set_ids: string[] | string;
  needs_grant: boolean;
  needs_connection: boolean;
  status: AuthorizationRequestStatus;
  allowed_at: Date | null;
  answered_at: Date | null;
  created_at: Date;
  expires_at: Date;
  created_by: string | null;
}

interface ExpiredRow {
  id: string;
  needs_grant: boolean;
  needs_connection: boolean;
}

/** TypeORM answers an UPDATE as `[rows, count]`, other statements as `rows`. */
function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number')
    return result[0] as T[];
  return result as T[];
}

function uuidArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',');
}

/** A PostgreSQL array literal of UUIDs (they hold no character needing quotes). */
function uuidArrayLiteral(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}

/**
 * Whether a stored session can give the exchange a token without the person: not marked for
 * reauthentication, and its access token unexpired or a refresh token that may still work.
 * (The provider may still refuse the refresh; the exchange then refuses again with a new link.)
 */
export function sessionUsable(
  session:
    | Pick<
        ThirdPartySessionRecord,
        'needsReauthentication' | 'accessTokenExpiresAt' | 'refreshTokenEnvelope' | 'refreshTokenExpiresAt'
      >
    | undefined,
  nowMs: number,
): boolean {
  if (session === undefined || session.needsReauthentication === true) return false;
  if (session.accessTokenExpiresAt === null || session.accessTokenExpiresAt.getTime() > nowMs) return true;
  return (
    session.refreshTokenEnvelope !== null &&
    (session.refreshTokenExpiresAt === null || session.refreshTokenExpiresAt.getTime() > nowMs)
  );
}

/** The stored form of the requested scopes: sorted, deduplicated, space-joined (part of the idempotency key). */
export function scopeKey(scopes: readonly string[]): string {
  return [...new Set(scopes)].sort().join(' ');
}

function toRecord(row: Row): AuthorizationRequestRecord {
  return {
    id: row.id,
    principal: row.principal,
    agentId: row.agent_id,
    serviceId: row.service_id,
    scopes: row.scopes === '' ? [] : row.scopes.split(' '),
    permissionSetIds: uuidArray(row.permission_set_ids),
    needsGrant: row.needs_grant,
    needsConnection: row.needs_connection,
    status: row.status,
    allowedAt: row.allowed_at,
    answeredAt: row.answered_at,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    createdBy: row.created_by,
  };
}

const KEY = 'principal = $2 AND agent_id = $3::uuid AND service_id = $4::uuid AND scopes = $5';

/**
 * The create in one statement: the key's stale pending row is expired, the limits are
 * counted, the new row is inserted unless the key already has a pending one (the partial
 * unique index decides), and the key's live pending request is answered, new or not. The
 * stale row expired here still holds the unique index for this statement's insert, so in that
 * (rare) case the next statement inserts; a concurrent create committed after this
 * statement's snapshot is invisible to it too (`create` below runs it again). Always one
 * row: the expired ones, and the request's columns (null when there is none).
 */
const CREATE = `WITH expired AS (
    UPDATE authorization_requests SET status = 'expired'
     WHERE ${KEY} AND status = 'pending' AND expires_at <= $9::timestamptz
    RETURNING id, needs_grant, needs_connection
  ), gate AS (
    SELECT (SELECT count(*) FROM expired) AS expired_count,
           (SELECT count(*) FROM authorization_requests
             WHERE principal = $2 AND status = 'pending' AND expires_at > $9::timestamptz) AS pending_count,
           (SELECT count(*) FROM authorization_requests
             WHERE principal = $2 AND agent_id = $3::uuid AND created_at > $9::timestamptz - interval '1 minute') AS recent_count
  ), inserted AS (
    INSERT INTO authorization_requests (id, principal, agent_id, service_id, scopes, permission_set_ids, needs_grant,
                                        needs_connection, status, allowed_at, created_at, expires_at, created_by)
    SELECT $1::uuid, $2, $3::uuid, $4::uuid, $5, $6::uuid[], $7::boolean, $8::boolean, 'pending',
           CASE WHEN $7::boolean THEN NULL ELSE $9::timestamptz END, $9::timestamptz, $10::timestamptz, $13
      FROM gate WHERE pending_count < $11::int AND recent_count < $12::int
    ON CONFLICT (principal, agent_id, service_id, scopes) WHERE status = 'pending' DO NOTHING
    RETURNING *
  )
  SELECT (SELECT json_agg(e) FROM expired e) AS expired_rows, x.*
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT true AS created, i.* FROM inserted i
      UNION ALL
      SELECT false AS created, r.* FROM authorization_requests r
       WHERE ${KEY} AND status = 'pending' AND expires_at > $9::timestamptz
    ) AS x ON true`;

/**
 * Authorization requests (docs/authorization-requests.md). State changes are conditional
 * UPDATEs (`... WHERE status = 'pending' RETURNING`), so racing answers make exactly one
 * transition; every change bumps the approvals' sync counter and notifies the replicas
 * through the table's triggers (see the migration), which wakes the gateways' waits.
 */
@Injectable()
export class AuthorizationRequestRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The key's pending request: a new one, or the live one already there (idempotent per
   * principal, agent, service and requested scopes). A request that asks nothing of the
   * person (`needsGrant` false) starts allowed. `rate_limited` when creating one would pass
   * a limit and none is pending for the key.
   */
  async create(
    request: NewAuthorizationRequest,
    limits: AuthorizationRequestLimits,
    now: Date,
  ): Promise<AuthorizationRequestCreate> {
    const values = [
      request.id,
      request.principal,
      request.agentId,
      request.serviceId,
      scopeKey(request.scopes),
      uuidArrayLiteral(request.permissionSetIds),
      request.needsGrant,
      request.needsConnection,
      now,
      request.expiresAt,
      limits.maxPendingPerPrincipal,
      limits.maxRequestsPerMinute,
      request.createdBy,
    ];
    // The key's stale request expired by a statement still holds the unique index for that statement's insert,
    // and a concurrent create committed after a statement's snapshot is invisible to it: the next statement
    // sees both (at most one of each can be in the way).
    const expired: AuthorizationRequestRecord[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const rows = await this.dataSource.query<
        (Partial<Row> & { created: boolean | null; expired_rows: ExpiredRow[] | string | null })[]
      >(CREATE, values);
      const first = rows[0];
      const stale =
        typeof first?.expired_rows === 'string'
          ? (JSON.parse(first.expired_rows) as ExpiredRow[])
          : first?.expired_rows;
      const row = (rows.find((r) => r.created === true) ?? first) as (Row & { created: boolean }) | undefined;
      const staleOf = (record: AuthorizationRequestRecord | undefined) =>
        (stale ?? []).map((e): AuthorizationRequestRecord => ({
          // The key's stale request: the same person, agent, service and scopes as this one.
          ...(record ?? this.keyRecord(request, now)),
          id: e.id,
          needsGrant: e.needs_grant,
          needsConnection: e.needs_connection,
          status: 'expired',
        }));
      if (row === undefined || typeof row.id !== 'string') {
        expired.push(...staleOf(undefined));
        continue;
      }
      const record = toRecord(row);
      expired.push(...staleOf(record));
      return { kind: row.created ? 'created' : 'existing', record, expired };
    }
    return { kind: 'rate_limited', expired };
  }

  /** What a request of the key looks like before it exists (for its stale predecessor's event). */
  private keyRecord(request: NewAuthorizationRequest, now: Date): AuthorizationRequestRecord {
    return {
      id: request.id,
      principal: request.principal,
      agentId: request.agentId,
      serviceId: request.serviceId,
      scopes: scopeKey(request.scopes) === '' ? [] : scopeKey(request.scopes).split(' '),
      permissionSetIds: request.permissionSetIds,
      needsGrant: request.needsGrant,
      needsConnection: request.needsConnection,
      status: 'expired',
      allowedAt: null,
      answeredAt: null,
      createdAt: now,
      expiresAt: now,
      createdBy: request.createdBy,
    };
  }

  /** The request, whoever it belongs to. */
  async find(id: string): Promise<AuthorizationRequestRecord | undefined> {
    const rows = await this.dataSource.query<Row[]>('SELECT * FROM authorization_requests WHERE id = $1', [id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** The request (by primary key) and the sync counter in one read: a change after this read is announced after `version`. */
  async state(id: string): Promise<AuthorizationRequestState> {
    const rows = await this.dataSource.query<(Partial<Row> & { sync_version: string })[]>(
      `SELECT v.version AS sync_version, r.* FROM approval_sync_version v
         LEFT JOIN authorization_requests r ON r.id = $1`,
      [id],
    );
    const row = rows[0];
    if (row === undefined) throw new Error('approval_sync_version has no row');
    return { version: Number(row.sync_version), record: typeof row.id === 'string' ? toRecord(row as Row) : undefined };
  }

  /**
   * Ends the request if it is pending and due (`events` run in that change's transaction);
   * the request as it now is, or undefined for an unknown id.
   */
  async expireIfDue(
    id: string,
    now: Date,
    events?: WithinTransaction<AuthorizationRequestRecord>,
  ): Promise<AuthorizationRequestRecord | undefined> {
    const [expired] = await this.change(
      "UPDATE authorization_requests SET status = 'expired' WHERE id = $1 AND status = 'pending' AND expires_at <= $2 RETURNING *",
      [id, now],
      events,
    );
    return expired ?? (await this.find(id));
  }

  /** Ends up to `limit` pending requests past their expiry, oldest first (the sweeper's batch); `events` per request. */
  async expireDue(
    now: Date,
    limit: number,
    events?: WithinTransaction<AuthorizationRequestRecord>,
  ): Promise<AuthorizationRequestRecord[]> {
    return this.change(
      `UPDATE authorization_requests SET status = 'expired'
        WHERE id IN (SELECT id FROM authorization_requests WHERE status = 'pending' AND expires_at <= $1
                      ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
          AND status = 'pending'
      RETURNING *`,
      [now, limit],
      events,
    );
  }

  /**
   * The person's Allow: a pending, unexpired request of `principal` becomes allowed, and
   * `completed` when `complete` (the connection is usable). Undefined when it was not pending.
   */
  async allow(
    id: string,
    principal: string,
    complete: boolean,
    now: Date,
    events?: WithinTransaction<AuthorizationRequestRecord>,
  ): Promise<AuthorizationRequestRecord | undefined> {
    const [allowed] = await this.change(
      `UPDATE authorization_requests
          SET allowed_at = COALESCE(allowed_at, $3),
              status = CASE WHEN $4::boolean THEN 'completed' ELSE status END,
              answered_at = CASE WHEN $4::boolean THEN $3::timestamptz ELSE answered_at END
        WHERE id = $1 AND principal = $2 AND status = 'pending' AND expires_at > $3
      RETURNING *`,
      [id, principal, now, complete],
      events,
    );
    return allowed;
  }

  /** The person's Deny of a pending, unexpired request. Undefined when it was not pending. */
  async deny(
    id: string,
    principal: string,
    now: Date,
    events?: WithinTransaction<AuthorizationRequestRecord>,
  ): Promise<AuthorizationRequestRecord | undefined> {
    const [denied] = await this.change(
      `UPDATE authorization_requests SET status = 'denied', answered_at = $3
        WHERE id = $1 AND principal = $2 AND status = 'pending' AND expires_at > $3
      RETURNING *`,
      [id, principal, now],
      events,
    );
    return denied;
  }

  /** A connection was stored: every pending, allowed, unexpired request of the person for the service completes. */
  async completeAllowed(
    principal: string,
    serviceId: string,
    now: Date,
    events?: WithinTransaction<AuthorizationRequestRecord>,
  ): Promise<AuthorizationRequestRecord[]> {
    return this.change(
      `UPDATE authorization_requests SET status = 'completed', answered_at = $3
        WHERE principal = $1 AND service_id = $2 AND status = 'pending' AND allowed_at IS NOT NULL AND expires_at > $3
      RETURNING *`,
      [principal, serviceId, now],
      events,
    );
  }

  /** One conditional UPDATE; with `events`, in a transaction that runs them for each changed request. */
  private async change(
    sql: string,
    values: readonly unknown[],
    events: WithinTransaction<AuthorizationRequestRecord> | undefined,
  ): Promise<AuthorizationRequestRecord[]> {
    if (events === undefined) return rowsOf<Row>(await this.dataSource.query(sql, [...values])).map(toRecord);
    return this.dataSource.transaction(async (manager) => {
      const records = rowsOf<Row>(await manager.query(sql, [...values])).map(toRecord);
      for (const record of records) await events(record, manager);
      return records;
    });
  }

  /** True the first time `opener` is recorded for the request (a misdirected opening is told once). */
  async firstOpening(id: string, opener: string): Promise<boolean> {
    const rows = rowsOf<{ request_id: string }>(
      await this.dataSource.query(
        `INSERT INTO authorization_request_openers (request_id, opener) VALUES ($1, $2)
         ON CONFLICT DO NOTHING RETURNING request_id`,
        [id, opener],
      ),
    );
    return rows.length > 0;
  }

  /** The agent's permission sets naming the service, in the agent's order, with the scopes each offers for it. */
  async offeredPermissionSets(agentId: string, serviceId: string): Promise<OfferedPermissionSet[]> {
    const rows = await this.dataSource.query<{ permission_set_id: string; scopes: string[] | string }[]>(
      `SELECT a.permission_set_id, s.scopes FROM agent_permission_sets a
         JOIN permission_set_service_scopes s ON s.permission_set_id = a.permission_set_id AND s.service_id = $2
        WHERE a.agent_id = $1 ORDER BY a.position`,
      [agentId, serviceId],
    );
    return rows.map((row) => ({
      permissionSetId: row.permission_set_id,
      scopes: typeof row.scopes === 'string' ? (JSON.parse(row.scopes) as string[]) : row.scopes,
    }));
  }
}
