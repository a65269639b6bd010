import type { Service } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import { ExclusiveLock } from '../pglite/exclusive-lock';
import { STORAGE_BACKEND } from '../persistence.tokens';
import { active } from './grant.repository';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';

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
  readonly needsReauthentication?: boolean;
  /** Bumped by every write; a refresh writes back only over the version it read. */
  readonly version: number;
}

/** A session as a connect stores it (a new row, or a reconnect replacing the row in place). */
export type NewThirdPartySession = Omit<ThirdPartySessionRecord, 'needsReauthentication' | 'version'>;

/** What a refresh writes back. */
export type RefreshedTokens = Pick<
  ThirdPartySessionRecord,
  | 'accessTokenEnvelope'
  | 'refreshTokenEnvelope'
  | 'tokenType'
  | 'scopes'
  | 'accessTokenExpiresAt'
  | 'refreshTokenExpiresAt'
  | 'updatedAt'
>;

/**
 * A write through the refresh lock: done, or not done because the row is no longer the
 * version read (a reconnect or a deletion landed meanwhile); then the row as it is now
 * (undefined once deleted).
 */
export type LockedWrite =
  { readonly written: true } | { readonly written: false; readonly current: ThirdPartySessionRecord | undefined };

/**
 * The locked session during a refresh: re-read after the lock, written back through it.
 * Both writes are conditional on the version of `current`, on both backends.
 * `within` (the write's event) runs only when the write was done, with the lock's
 * transaction on PostgreSQL; on PGlite there is none, and it runs right after the write.
 */
export interface LockedSession {
  readonly current: ThirdPartySessionRecord | undefined;
  save(tokens: RefreshedTokens, within?: WithinTransaction<ThirdPartySessionRecord>): Promise<LockedWrite>;
  markNeedsReauthentication(now: Date, within?: WithinTransaction<ThirdPartySessionRecord>): Promise<LockedWrite>;
}

export interface SessionRow {
  id: string;
  principal: string;
  service_id: string;
  access_token_envelope: Buffer;
  refresh_token_envelope: Buffer | null;
  token_type: string;
  scopes: string[];
  access_token_expires_at: Date | null;
  refresh_token_expires_at: Date | null;
  initiated_at: Date;
  updated_at: Date;
  needs_reauthentication: boolean;
  version: number;
}

export function toRecord(row: SessionRow): ThirdPartySessionRecord {
  return {
    id: row.id,
    principal: row.principal,
    serviceId: row.service_id,
    accessTokenEnvelope: row.access_token_envelope,
    refreshTokenEnvelope: row.refresh_token_envelope,
    tokenType: row.token_type,
    scopes: row.scopes,
    accessTokenExpiresAt: row.access_token_expires_at,
    refreshTokenExpiresAt: row.refresh_token_expires_at,
    initiatedAt: row.initiated_at,
    updatedAt: row.updated_at,
    needsReauthentication: row.needs_reauthentication,
    version: row.version,
  };
}

const SELECT = 'SELECT * FROM third_party_sessions WHERE principal = $1 AND service_id = $2';

/** One configured service on the caller's sessions page: its session (if any) and the agents depending on it. */
export interface SessionOverview {
  readonly service: Pick<Service, 'id' | 'displayName' | 'logoUrl' | 'scopes'>;
  readonly session: ThirdPartySessionRecord | undefined;
  /** Agents whose active grant from the principal delegates the service (as `GrantRepository.agentsDelegatingService`). */
  readonly dependentAgentCount: number;
}

type OverviewRow = {
  s_id: string;
  s_display_name: string;
  s_logo_url: string | null;
  s_scopes: { scope: string; description: string }[];
  dependent_agent_count: number | null;
} & {
  [K in keyof SessionRow]: SessionRow[K] | null;
};

/**
 * Every service, oldest first (as `ServiceRepository.list`), with the principal's session
 * and, when there is one, the count of the principal's agents delegating the service under
 * an active grant: one statement whatever the number of services. Another principal's
 * sessions and grants never join.
 */
const OVERVIEW_SQL = `
SELECT s.id AS s_id, s.display_name AS s_display_name, s.logo_url AS s_logo_url, s.scopes AS s_scopes,
       t.id, t.principal, t.service_id, t.access_token_envelope, t.refresh_token_envelope, t.token_type, t.scopes,
       t.access_token_expires_at, t.refresh_token_expires_at, t.initiated_at, t.updated_at, t.needs_reauthentication, t.version,
       CASE WHEN t.id IS NULL THEN NULL ELSE (
         SELECT count(DISTINCT a.id)::int
           FROM grants g JOIN grant_delegations d ON d.grant_id = g.id JOIN agents a ON a.id = g.agent_id
          WHERE g.principal = $1 AND d.service_id = s.id AND ${active(2)}) END AS dependent_agent_count
  FROM services s
  LEFT JOIN third_party_sessions t ON t.service_id = s.id AND t.principal = $1
 ORDER BY s.created_at ASC, s.id ASC`;

/** A session a proactive-refresh sweep claimed: whose, and the version the claim saw. */
export interface ClaimedSession {
  readonly principal: string;
  readonly serviceId: string;
  readonly version: number;
}

/** What a sweep claims: sessions due by `now` and `horizon`, leased until `leaseUntil`, at most `limit`, none of `skipServiceIds`. */
export interface RefreshClaim {
  readonly now: Date;
  /** `now` + the window: access tokens expiring by then are due. */
  readonly horizon: Date;
  readonly leaseUntil: Date;
  readonly limit: number;
  /** Services the sweep is backing off from (their provider is failing). */
  readonly skipServiceIds: readonly string[];
}

/**
 * The sessions a sweep refreshes ahead of expiry, claimed with a lease.
 * Due: the access token expires by the horizon and at least half its lifetime since the
 * last write has passed (remaining <= elapsed: a provider issuing tokens shorter than the
 * window is refreshed at half-life, not on every sweep); a refresh token not expired; not
 * marked for re-authentication; at least one dependent agent (an active grant of the
 * principal delegating the service). `FOR UPDATE SKIP LOCKED` plus the lease: concurrent
 * sweeps (replicas, workers) never claim the same row, and a row whose refresh holds its
 * lock (an exchange refreshing) is skipped. Earliest expiry first (the partial index).
 */
const CLAIM_SQL = `
UPDATE third_party_sessions SET refresh_claimed_until = $3
 WHERE id IN (
   SELECT t.id FROM third_party_sessions t
    WHERE t.refresh_token_envelope IS NOT NULL AND t.needs_reauthentication = false
      AND t.access_token_expires_at <= $2
      AND t.access_token_expires_at - $1::timestamptz <= $1::timestamptz - t.updated_at
      AND (t.refresh_token_expires_at IS NULL OR t.refresh_token_expires_at > $1)
      AND (t.refresh_claimed_until IS NULL OR t.refresh_claimed_until < $1)
      AND NOT (t.service_id = ANY($5::uuid[]))
      AND EXISTS (SELECT 1 FROM grants g JOIN grant_delegations d ON d.grant_id = g.id
                   WHERE g.principal = t.principal AND d.service_id = t.service_id AND ${active(1)})
    ORDER BY t.access_token_expires_at
    LIMIT $4
    FOR UPDATE OF t SKIP LOCKED)
RETURNING principal, service_id, version, access_token_expires_at`;

/**
 * Third-party sessions, one per (principal, service). Writes after a refresh are
 * UPDATEs of the locked row at the version read, never upserts, so a DELETE or a
 * reconnect that wins a race with a refresh is never undone.
 */
@Injectable()
export class SessionRepository {
  /** PGlite: one process owns the database, so an in-process lock per session suffices. */
  private readonly localLocks = new Map<string, ExclusiveLock>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(STORAGE_BACKEND) private readonly backend: 'pglite' | 'postgres',
    private readonly transactions: Transactions,
    private readonly exchangeChanges: ExchangeChanges,
  ) {}

  async find(principal: string, serviceId: string): Promise<ThirdPartySessionRecord | undefined> {
    const rows = await this.dataSource.query<SessionRow[]>(SELECT, [principal, serviceId]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** Every configured service with the principal's session and its dependent agent count, in one statement. */
  async overview(principal: string, now: Date): Promise<SessionOverview[]> {
    const rows = await this.dataSource.query<OverviewRow[]>(OVERVIEW_SQL, [principal, now]);
    return rows.map((row) => ({
      service: { id: row.s_id, displayName: row.s_display_name, logoUrl: row.s_logo_url, scopes: row.s_scopes },
      session: row.id === null ? undefined : toRecord(row as SessionRow),
      dependentAgentCount: row.dependent_agent_count ?? 0,
    }));
  }

  /** Which of `serviceIds` the principal has a stored session with. */
  async connectedServiceIds(principal: string, serviceIds: readonly string[]): Promise<Set<string>> {
    if (serviceIds.length === 0) return new Set();
    const rows = await this.dataSource.query<{ service_id: string }[]>(
      'SELECT service_id FROM third_party_sessions WHERE principal = $1 AND service_id = ANY($2)',
      [principal, serviceIds],
    );
    return new Set(rows.map((row) => row.service_id));
  }

  /**
   * Stores the session, replacing the principal's previous one for the service in place (a
   * reconnect, a new version). With `within` (the connection's event), both run in
   * one transaction.
   */
  async upsert(session: NewThirdPartySession, within?: WithinTransaction<NewThirdPartySession>): Promise<void> {
    await this.transactions.run(async (manager, scope) => {
      scope.afterCommit(() => this.exchangeChanges.forget(session.principal));
      await this.upsertWith(manager, session);
      await within?.(session, manager);
    });
  }

  private async upsertWith(manager: EntityManager, session: NewThirdPartySession): Promise<void> {
    await manager.query(
      `INSERT INTO third_party_sessions (id, principal, service_id, access_token_envelope, refresh_token_envelope, token_type, scopes, access_token_expires_at, refresh_token_expires_at, initiated_at, updated_at, needs_reauthentication)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, false)
       ON CONFLICT (principal, service_id) DO UPDATE SET
         access_token_envelope = EXCLUDED.access_token_envelope, refresh_token_envelope = EXCLUDED.refresh_token_envelope,
         token_type = EXCLUDED.token_type, scopes = EXCLUDED.scopes, access_token_expires_at = EXCLUDED.access_token_expires_at,
         refresh_token_expires_at = EXCLUDED.refresh_token_expires_at, initiated_at = EXCLUDED.initiated_at, updated_at = EXCLUDED.updated_at,
         needs_reauthentication = false, version = third_party_sessions.version + 1`,
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

  /**
   * Deletes the stored tokens; false when there was no session. `within` (the
   * disconnection's event) runs in the deletion's transaction when a session was deleted.
   */
  async delete(
    principal: string,
    serviceId: string,
    within?: WithinTransaction<{ principal: string; serviceId: string }>,
  ): Promise<boolean> {
    return this.transactions.run(async (manager, scope) => {
      scope.afterCommit(() => this.exchangeChanges.forget(principal));
      const [, count] = await manager.query<[unknown[], number]>(
        'DELETE FROM third_party_sessions WHERE principal = $1 AND service_id = $2',
        [principal, serviceId],
      );
      if (count > 0) await within?.({ principal, serviceId }, manager);
      return count > 0;
    });
  }

  /**
   * Claims the sessions due for a proactive refresh (`CLAIM_SQL`): one
   * statement, the same on PostgreSQL and PGlite; earliest expiry first. The lease only keeps other sweeps away;
   * the refresh itself still takes the refresh lock and re-checks the row.
   */
  async claimDueForRefresh(claim: RefreshClaim): Promise<ClaimedSession[]> {
    const [rows] = await this.dataSource.query<
      [{ principal: string; service_id: string; version: number; access_token_expires_at: Date }[], number]
    >(CLAIM_SQL, [claim.now, claim.horizon, claim.leaseUntil, claim.limit, claim.skipServiceIds]);
    // RETURNING keeps no order: earliest expiry first again.
    rows.sort((a, b) => a.access_token_expires_at.getTime() - b.access_token_expires_at.getTime());
    return rows.map((row) => ({ principal: row.principal, serviceId: row.service_id, version: row.version }));
  }

  /**
   * Runs `work` holding the session's refresh lock, with the session re-read after the
   * lock is acquired. PostgreSQL: a row lock (`SELECT ... FOR UPDATE` in a transaction),
   * so across replicas exactly one refresh runs and the others see its result; the
   * transaction commits when `work` returns and rolls back when it throws, so a write that
   * must stay (the re-authentication mark) is followed by a return, never a throw. PGlite
   * (one process by construction): an in-process lock, so its single connection is not
   * held while the provider answers; a reconnect or delete can land meanwhile, which the
   * version check of the writes detects.
   */
  async withRefreshLock<T>(
    principal: string,
    serviceId: string,
    work: (locked: LockedSession) => Promise<T>,
  ): Promise<T> {
    if (this.backend === 'postgres') {
      return this.transactions.run(async (manager, scope) => {
        // A refresh or a mark written: this process's next exchange reads the session again.
        scope.afterCommit(() => this.exchangeChanges.forget(principal));
        const rows = await manager.query<SessionRow[]>(`${SELECT} FOR UPDATE`, [principal, serviceId]);
        return work(this.locked(manager, rows[0] ? toRecord(rows[0]) : undefined));
      });
    }
    const key = `${principal}\u0000${serviceId}`;
    const lock = this.localLocks.get(key) ?? new ExclusiveLock();
    this.localLocks.set(key, lock);
    const release = await lock.acquire(0);
    try {
      return await work(this.locked(this.dataSource.manager, await this.find(principal, serviceId)));
    } finally {
      release();
      if (!lock.isHeld) this.localLocks.delete(key);
    }
  }

  private locked(manager: EntityManager, current: ThirdPartySessionRecord | undefined): LockedSession {
    const write = async (
      sql: string,
      values: readonly unknown[],
      within: WithinTransaction<ThirdPartySessionRecord> | undefined,
    ): Promise<LockedWrite> => {
      if (current === undefined) return { written: false, current: undefined };
      const [, count] = await manager.query<[unknown[], number]>(sql, [current.id, current.version, ...values]);
      if (count > 0) {
        await within?.(current, manager);
        return { written: true };
      }
      const rows = await manager.query<SessionRow[]>(SELECT, [current.principal, current.serviceId]);
      return { written: false, current: rows[0] ? toRecord(rows[0]) : undefined };
    };
    return {
      current,
      save: (tokens, within) =>
        write(
          `UPDATE third_party_sessions SET access_token_envelope = $3, refresh_token_envelope = $4, token_type = $5, scopes = $6,
             access_token_expires_at = $7, refresh_token_expires_at = $8, updated_at = $9, needs_reauthentication = false, version = version + 1
           WHERE id = $1 AND version = $2`,
          [
            tokens.accessTokenEnvelope,
            tokens.refreshTokenEnvelope,
            tokens.tokenType,
            JSON.stringify(tokens.scopes),
            tokens.accessTokenExpiresAt,
            tokens.refreshTokenExpiresAt,
            tokens.updatedAt,
          ],
          within,
        ),
      markNeedsReauthentication: (now, within) =>
        write(
          'UPDATE third_party_sessions SET needs_reauthentication = true, updated_at = $3, version = version + 1 WHERE id = $1 AND version = $2',
          [now],
          within,
        ),
    };
  }
}
