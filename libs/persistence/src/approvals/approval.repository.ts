import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import { active } from '../registry/grant.repository';
import type {
  ApprovalPersistence,
  ApprovalRecord,
  ApprovalStatus,
  CibaCreateOutcome,
  CibaPollResult,
  CibaPollVerdict,
  CreateOutcome,
  CreationLimits,
  NewApproval,
  NewCibaApproval,
  ParamsPattern,
  RememberedAnswer,
  RiskLevel,
  SyncFilter,
  SyncSnapshot,
  SyncedApproval,
} from '@broker/domain';

interface ApprovalRow {
  id: string;
  principal: string;
  agent_id: string;
  agent_display_name?: string;
  tool_name: string;
  arguments: string;
  arguments_hash: string;
  metadata: string;
  risk_level: RiskLevel | null;
  agent_session_id: string | null;
  status: ApprovalStatus;
  persistence: ApprovalPersistence | null;
  params_pattern: string | null;
  consumed: boolean;
  listed: boolean;
  created_at: Date;
  expires_at: Date | null;
  approved_at: Date | null;
  denied_at: Date | null;
  consumed_at: Date | null;
  revoked_at: Date | null;
  ciba_request_sha256?: Buffer | null;
  ciba_requester?: string | null;
  binding_message?: string | null;
  authorization_details?: string | null;
  scopes?: string | null;
  ciba_interval_ms?: number | null;
  ciba_expires_at?: Date | null;
  ciba_token_issued_at?: Date | null;
}

interface SyncRow {
  version: string;
  id: string | null;
  principal: string;
  agent_id: string;
  tool_name: string;
  arguments_hash: string;
  params_pattern: string | null;
  status: 'pending' | 'approved' | 'denied';
  persistence: ApprovalPersistence | null;
  consumed: boolean;
  agent_session_id: string | null;
  approved_at: Date | null;
}

/** Class id of the per-(principal, agent) advisory lock (two-key form: its own key space). */
const PAIR_LOCK_CLASS = 9_002;

/** Time-based exits from the sync state: an expired pending becomes `expired`, a one-time denial leaves. */
const EXPIRE_DUE = `UPDATE approvals SET listed = false, status = CASE WHEN status = 'pending' THEN 'expired' ELSE status END
                    WHERE listed AND expires_at <= $1`;

const SELECT_WITH_AGENT =
  'SELECT a.*, g.display_name AS agent_display_name FROM approvals a JOIN agents g ON g.id = a.agent_id';

/**
 * The ledger events of a create, run in its transaction: `requested` for the new
 * pending request, `expired` for each stale pending of the pair the create expired first.
 */
export interface CreateEvents {
  readonly requested: WithinTransaction<ApprovalRecord>;
  readonly expired: WithinTransaction<ApprovalRecord>;
}

/** Rolls the create transaction back when a limit is reached. */
class LimitReached extends Error {
  constructor(readonly outcome: Extract<CreateOutcome, { kind: 'rate_limited' }>) {
    super('approval creation limit reached');
  }
}

/**
 * TypeORM answers an UPDATE/DELETE as `[rows, count]` and anything else as `rows`, and
 * which one depends on the statement's command tag: normalised here.
 */
function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number')
    return result[0] as T[];
  return result as T[];
}

function parsePattern(text: string | null): ParamsPattern | null {
  return text === null ? null : (JSON.parse(text) as ParamsPattern);
}

function toRecord(row: ApprovalRow): ApprovalRecord {
  return {
    id: row.id,
    principal: row.principal,
    agentId: row.agent_id,
    ...(row.agent_display_name === undefined ? {} : { agentDisplayName: row.agent_display_name }),
    toolName: row.tool_name,
    arguments: JSON.parse(row.arguments) as Record<string, unknown>,
    argumentsHash: row.arguments_hash.trim(),
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    riskLevel: row.risk_level,
    agentSessionId: row.agent_session_id,
    status: row.status,
    persistence: row.persistence,
    paramsPattern: parsePattern(row.params_pattern),
    consumed: row.consumed,
    listed: row.listed,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    approvedAt: row.approved_at,
    deniedAt: row.denied_at,
    consumedAt: row.consumed_at,
    revokedAt: row.revoked_at,
    ciba:
      row.ciba_requester === null ||
      row.ciba_requester === undefined ||
      row.authorization_details === null ||
      row.authorization_details === undefined ||
      row.ciba_expires_at === null ||
      row.ciba_expires_at === undefined
        ? null
        : {
            requester: row.ciba_requester,
            bindingMessage: row.binding_message ?? null,
            authorizationDetailsJson: row.authorization_details,
            scopes: row.scopes === null || row.scopes === undefined || row.scopes === '' ? [] : row.scopes.split(' '),
            expiresAt: row.ciba_expires_at,
            intervalMs: row.ciba_interval_ms ?? 0,
            tokenIssuedAt: row.ciba_token_issued_at ?? null,
          },
  };
}

function toSynced(row: SyncRow & { id: string }): SyncedApproval {
  return {
    id: row.id,
    principal: row.principal,
    agentId: row.agent_id,
    toolName: row.tool_name,
    argumentsHash: row.arguments_hash.trim(),
    paramsPattern: parsePattern(row.params_pattern),
    status: row.status,
    persistence: row.persistence,
    consumed: row.consumed,
    agentSessionId: row.agent_session_id,
    approvedAt: row.approved_at,
  };
}

/**
 * Tool approvals. Every read and write takes the owner (principal); state changes are
 * single conditional UPDATEs (`... WHERE status = 'pending' RETURNING`), so two racing
 * decisions or consumes make exactly one transition. Every change bumps the sync version
 * and notifies the replicas through the table's triggers (see the migration).
 */
@Injectable()
export class ApprovalRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Creates a pending request, or returns the pending duplicate (same principal, agent,
   * tool and arguments hash), decided by the partial unique index. Under the pair's
   * advisory lock: stale pendings of the pair are expired first (they would otherwise
   * hold the unique index), and the limits are counted after the insert, which is rolled
   * back when one is exceeded, so concurrent creates can never overshoot them.
   * `events` run in the same transaction (a refused create leaves none).
   */
  async create(
    approval: NewApproval,
    limits: CreationLimits,
    now: Date,
    events?: CreateEvents,
  ): Promise<CreateOutcome> {
    const { principal, agentId } = approval;
    try {
      return await this.dataSource.transaction(async (manager): Promise<CreateOutcome> => {
        await manager.query("SELECT pg_advisory_xact_lock($1, hashtext($2 || '/' || $3))", [
          PAIR_LOCK_CLASS,
          principal,
          agentId,
        ]);
        const agent = await manager.query<{ display_name: string }[]>(
          'SELECT display_name FROM agents WHERE id = $1 FOR KEY SHARE',
          [agentId],
        );
        if (agent[0] === undefined) return { kind: 'agent_unknown' };
        // docs/approvals.md "Grants and approvals": only an agent the person allows may ask. FOR SHARE orders this
        // create against a revocation (which deletes the row, then ends the pair's approvals): either this sees no
        // grant, or the revocation waits for this commit and ends the request it made.
        const grant = await manager.query<unknown[]>(
          `SELECT 1 FROM grants g WHERE g.principal = $1 AND g.agent_id = $2 AND ${active(3)} FOR SHARE`,
          [principal, agentId, now],
        );
        if (grant.length === 0) return { kind: 'grant_required' };
        const expired = rowsOf<ApprovalRow>(
          await manager.query(`${EXPIRE_DUE} AND principal = $2 AND agent_id = $3 RETURNING *`, [
            now,
            principal,
            agentId,
          ]),
        );
        for (const row of expired) if (row.status === 'expired') await events?.expired(toRecord(row), manager);
        const inserted = rowsOf<ApprovalRow>(
          await manager.query(
            `INSERT INTO approvals (id, principal, agent_id, tool_name, arguments, arguments_hash, metadata, risk_level, agent_session_id, status, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11)
             ON CONFLICT (principal, agent_id, tool_name, arguments_hash) WHERE status = 'pending' AND ciba_request_sha256 IS NULL DO NOTHING
             RETURNING *`,
            [
              approval.id,
              principal,
              agentId,
              approval.toolName,
              approval.argumentsJson,
              approval.argumentsHash,
              approval.metadataJson,
              approval.riskLevel,
              approval.agentSessionId,
              now,
              approval.expiresAt,
            ],
          ),
        );
        const created = inserted[0];
        if (created === undefined) {
          const existing = await manager.query<ApprovalRow[]>(
            "SELECT * FROM approvals WHERE principal = $1 AND agent_id = $2 AND tool_name = $3 AND arguments_hash = $4 AND status = 'pending' AND ciba_request_sha256 IS NULL",
            [principal, agentId, approval.toolName, approval.argumentsHash],
          );
          return {
            kind: 'duplicate',
            record: toRecord({ ...(existing[0] as ApprovalRow), agent_display_name: agent[0].display_name }),
          };
        }
        await this.assertWithinLimits(manager, principal, agentId, limits, now);
        const record = toRecord({ ...created, agent_display_name: agent[0].display_name });
        await events?.requested(record, manager);
        return { kind: 'created', record };
      });
    } catch (error) {
      if (error instanceof LimitReached) return error.outcome;
      throw error;
    }
  }

  /**
   * Creates the approval row of one CIBA request (docs/ciba.md), under the pair's lock like
   * `create`: the agent must exist and hold the person's active grant, stale pendings expire
   * first, and the same limits count the row. `remembered` picks, from the pair's live
   * permanent decisions for the tool, the one that answers this call at once (the row is then
   * created approved `once` or denied `once`, never pending). `events` run in the transaction.
   */
  async createCiba(
    approval: NewCibaApproval,
    limits: CreationLimits,
    now: Date,
    remembered: (decisions: readonly ApprovalRecord[]) => RememberedAnswer | undefined,
    events?: CreateEvents & {
      readonly answered: WithinTransaction<{ record: ApprovalRecord; remembered: RememberedAnswer }>;
    },
  ): Promise<CibaCreateOutcome> {
    const { principal, agentId } = approval;
    try {
      return await this.dataSource.transaction(async (manager): Promise<CibaCreateOutcome> => {
        await manager.query("SELECT pg_advisory_xact_lock($1, hashtext($2 || '/' || $3))", [
          PAIR_LOCK_CLASS,
          principal,
          agentId,
        ]);
        const agent = await manager.query<{ display_name: string }[]>(
          'SELECT display_name FROM agents WHERE id = $1 FOR KEY SHARE',
          [agentId],
        );
        if (agent[0] === undefined) return { kind: 'agent_unknown' };
        const grant = await manager.query<unknown[]>(
          `SELECT 1 FROM grants g WHERE g.principal = $1 AND g.agent_id = $2 AND ${active(3)} FOR SHARE`,
          [principal, agentId, now],
        );
        if (grant.length === 0) return { kind: 'grant_required' };
        const expired = rowsOf<ApprovalRow>(
          await manager.query(`${EXPIRE_DUE} AND principal = $2 AND agent_id = $3 RETURNING *`, [
            now,
            principal,
            agentId,
          ]),
        );
        for (const row of expired) if (row.status === 'expired') await events?.expired(toRecord(row), manager);
        const decisions = await manager.query<ApprovalRow[]>(
          `SELECT * FROM approvals WHERE principal = $1 AND agent_id = $2 AND tool_name = $3 AND listed
              AND persistence = 'permanent' AND status IN ('approved', 'denied') ORDER BY created_at, id`,
          [principal, agentId, approval.toolName],
        );
        const answer = remembered(decisions.map(toRecord));
        const status = answer?.status ?? 'pending';
        const inserted = rowsOf<ApprovalRow>(
          await manager.query(
            `INSERT INTO approvals (id, principal, agent_id, tool_name, arguments, arguments_hash, metadata, risk_level, status, persistence,
                                    created_at, expires_at, approved_at, denied_at, ciba_request_sha256, ciba_requester, binding_message,
                                    authorization_details, scopes, ciba_interval_ms, ciba_expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, '{}', $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $11)
             RETURNING *`,
            [
              approval.id,
              principal,
              agentId,
              approval.toolName,
              approval.argumentsJson,
              approval.argumentsHash,
              approval.riskLevel,
              status,
              answer === undefined ? null : 'once',
              now,
              approval.expiresAt,
              status === 'approved' ? now : null,
              status === 'denied' ? now : null,
              approval.requestSha256,
              approval.requester,
              approval.bindingMessage,
              approval.authorizationDetailsJson,
              approval.scopes.join(' '),
              approval.intervalMs,
            ],
          ),
        );
        const created = inserted[0] as ApprovalRow;
        await this.assertWithinLimits(manager, principal, agentId, limits, now);
        const record = toRecord({ ...created, agent_display_name: agent[0].display_name });
        await events?.requested(record, manager);
        if (answer !== undefined) await events?.answered({ record, remembered: answer }, manager);
        return { kind: 'created', record, remembered: answer };
      });
    } catch (error) {
      if (error instanceof LimitReached) return error.outcome;
      throw error;
    }
  }

  /**
   * One poll of a CIBA request (CIBA Core 1.0 §11), one statement, whatever the replica: the
   * row of this `auth_req_id` digest for this agent and requester (else `invalid`), locked,
   * judged and written at once. Used (`ciba_token_issued_at` set) → `invalid`; past the
   * request's expiry → `expired`; a poll earlier than the last in-time poll plus the interval
   * (less 250 ms of network jitter) → `slow_down`, growing the interval by 5 s for every later
   * poll (an in-time poll records its time); denied or revoked → `denied`; approved →
   * `approved`, which issues nothing: `issueCiba` does, once.
   */
  async pollCiba(requestSha256: Buffer, agentId: string, requester: string, now: Date): Promise<CibaPollResult> {
    const rows = rowsOf<{ id: string; ciba_interval_ms: number; verdict: CibaPollVerdict }>(
      await this.dataSource.query(
        `WITH judged AS (
           SELECT id, CASE
               WHEN ciba_token_issued_at IS NOT NULL THEN 'invalid'
               WHEN status = 'expired' OR ciba_expires_at <= $4::timestamptz THEN 'expired'
               WHEN ciba_last_poll_at IS NOT NULL
                    AND $4::timestamptz < ciba_last_poll_at + (ciba_interval_ms - 250) * interval '1 millisecond' THEN 'slow_down'
               WHEN status IN ('denied', 'revoked') THEN 'denied'
               WHEN status = 'pending' THEN 'pending'
               ELSE 'approved' END AS verdict
             FROM approvals
            WHERE ciba_request_sha256 = $1 AND agent_id = $2 AND ciba_requester = $3
              FOR UPDATE
         )
         UPDATE approvals a SET
           ciba_interval_ms = CASE WHEN j.verdict = 'slow_down' THEN a.ciba_interval_ms + 5000 ELSE a.ciba_interval_ms END,
           ciba_last_poll_at = CASE WHEN j.verdict IN ('invalid', 'slow_down') THEN a.ciba_last_poll_at ELSE $4::timestamptz END
          FROM judged j WHERE a.id = j.id
        RETURNING a.id, a.ciba_interval_ms, j.verdict`,
        [requestSha256, agentId, requester, now],
      ),
    );
    const row = rows[0];
    if (row === undefined) return { verdict: 'invalid', id: undefined, intervalMs: 0 };
    return { verdict: row.verdict, id: row.id, intervalMs: row.ciba_interval_ms };
  }

  /**
   * Marks the token of an approved CIBA request issued: exactly one caller wins, across
   * replicas, and only while the person's grant for the agent is active. A one-time approval is
   * consumed with it (it leaves the sync state); a permanent one stays remembered. `events`
   * run in the same transaction. undefined: another poll won, or the approval ended.
   */
  async issueCiba(
    id: string,
    now: Date,
    events?: WithinTransaction<ApprovalRecord>,
  ): Promise<ApprovalRecord | undefined> {
    return this.transition(
      events,
      `UPDATE approvals SET ciba_token_issued_at = $2,
              consumed = (persistence = 'once'),
              consumed_at = CASE WHEN persistence = 'once' THEN $2::timestamptz END,
              listed = listed AND persistence <> 'once'
        WHERE id = $1 AND ciba_request_sha256 IS NOT NULL AND ciba_token_issued_at IS NULL AND status = 'approved'
          AND ciba_expires_at > $2
          AND EXISTS (SELECT 1 FROM grants g WHERE g.principal = approvals.principal AND g.agent_id = approvals.agent_id AND ${active(2)})
        RETURNING *`,
      [id, now],
    );
  }

  /** The principal's approval (any state), with the agent's display name; undefined for another principal's. */
  async find(id: string, principal: string): Promise<ApprovalRecord | undefined> {
    const rows = await this.dataSource.query<ApprovalRow[]>(
      `${SELECT_WITH_AGENT} WHERE a.id = $1 AND a.principal = $2`,
      [id, principal],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /**
   * The approval whatever its owner: only for the gateway's consume, which must tell "no
   * such approval" (404) from "another principal's" (403) after verifying the token.
   */
  async findAnyOwner(id: string): Promise<ApprovalRecord | undefined> {
    const rows = await this.dataSource.query<ApprovalRow[]>('SELECT * FROM approvals WHERE id = $1', [id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** The principal's unexpired pending requests, oldest first (a queue). */
  async listPending(principal: string, now: Date): Promise<ApprovalRecord[]> {
    const rows = await this.dataSource.query<ApprovalRow[]>(
      `${SELECT_WITH_AGENT} WHERE a.principal = $1 AND a.status = 'pending' AND a.expires_at > $2 ORDER BY a.created_at, a.id`,
      [principal, now],
    );
    return rows.map(toRecord);
  }

  /** The principal's standing permanent approvals and denials, most recent decision first. */
  async listPermanent(principal: string): Promise<ApprovalRecord[]> {
    const rows = await this.dataSource.query<ApprovalRow[]>(
      `${SELECT_WITH_AGENT} WHERE a.principal = $1 AND a.persistence = 'permanent' AND a.status IN ('approved', 'denied')
        ORDER BY COALESCE(a.approved_at, a.denied_at) DESC, a.id`,
      [principal],
    );
    return rows.map(toRecord);
  }

  /**
   * pending → approved, only while unexpired; undefined when the approval was not in that state.
   * A one-time approval of a CIBA request stays listed until its `auth_req_id` expires.
   */
  async approve(
    id: string,
    principal: string,
    persistence: ApprovalPersistence,
    pattern: ParamsPattern | null,
    now: Date,
    events?: WithinTransaction<ApprovalRecord>,
  ): Promise<ApprovalRecord | undefined> {
    return this.transition(
      events,
      `UPDATE approvals SET status = 'approved', persistence = $3::varchar, params_pattern = $4, approved_at = $5,
              expires_at = CASE WHEN $3::varchar = 'once' AND ciba_request_sha256 IS NOT NULL THEN ciba_expires_at END
        WHERE id = $1 AND principal = $2 AND status = 'pending' AND expires_at > $5 RETURNING *`,
      [id, principal, persistence, pattern === null ? null : JSON.stringify(pattern), now],
    );
  }

  /**
   * pending → denied, only while unexpired. `listedUntil`: when a one-time denial leaves the
   * sync state (null: listed until revoked).
   */
  async deny(
    id: string,
    principal: string,
    persistence: 'once' | 'permanent',
    listedUntil: Date | null,
    now: Date,
    events?: WithinTransaction<ApprovalRecord>,
  ): Promise<ApprovalRecord | undefined> {
    return this.transition(
      events,
      `UPDATE approvals SET status = 'denied', persistence = $3, denied_at = $4, expires_at = $5
        WHERE id = $1 AND principal = $2 AND status = 'pending' AND expires_at > $4 RETURNING *`,
      [id, principal, persistence, now, listedUntil],
    );
  }

  /**
   * An approved, unconsumed `once` approval of this principal and agent, whose active grant
   * for the agent still stands (docs/approvals.md "Grants and approvals"), → consumed;
   * undefined otherwise. A CIBA request's approval is never consumed here: its token is the use.
   */
  async consume(
    id: string,
    principal: string,
    agentId: string,
    now: Date,
    events?: WithinTransaction<ApprovalRecord>,
  ): Promise<ApprovalRecord | undefined> {
    return this.transition(
      events,
      `UPDATE approvals SET consumed = true, consumed_at = $4, listed = false
        WHERE id = $1 AND principal = $2 AND agent_id = $3 AND status = 'approved' AND persistence = 'once' AND NOT consumed
          AND ciba_request_sha256 IS NULL AND EXISTS (SELECT 1 FROM grants g WHERE g.principal = $2 AND g.agent_id = $3 AND ${active(4)}) RETURNING *`,
      [id, principal, agentId, now],
    );
  }

  /** A permanent approval or denial → revoked (leaves the sync state); undefined otherwise. */
  async revoke(
    id: string,
    principal: string,
    now: Date,
    events?: WithinTransaction<ApprovalRecord>,
  ): Promise<ApprovalRecord | undefined> {
    return this.transition(
      events,
      `UPDATE approvals SET status = 'revoked', revoked_at = $3, listed = false
        WHERE id = $1 AND principal = $2 AND persistence = 'permanent' AND status IN ('approved', 'denied') RETURNING *`,
      [id, principal, now],
    );
  }

  /**
   * Ends every live approval of the pair with the person's grant for the agent, in the
   * grant deletion's transaction (`manager`): pending requests, unconsumed one-time
   * approvals, session and permanent approvals and denials, one-time denials still listed.
   * A pending request already past its TTL is `expired` (as the sweeper would make it), every
   * other one `revoked`; all leave the sync state (the table's trigger bumps the version and
   * wakes every replica's long-pollers at commit). Records keep their history: re-granting
   * the agent brings none back. `events` run in the same transaction for each record.
   */
  async endPair(
    principal: string,
    agentId: string,
    now: Date,
    manager: EntityManager,
    events?: {
      readonly revoked: WithinTransaction<ApprovalRecord>;
      readonly expired: WithinTransaction<ApprovalRecord>;
    },
  ): Promise<{ revoked: ApprovalRecord[]; expired: ApprovalRecord[] }> {
    const expired = rowsOf<ApprovalRow>(
      await manager.query(`${EXPIRE_DUE} AND principal = $2 AND agent_id = $3 RETURNING *`, [now, principal, agentId]),
    )
      .filter((row) => row.status === 'expired')
      .map(toRecord);
    const revoked = rowsOf<ApprovalRow>(
      await manager.query(
        `UPDATE approvals SET status = 'revoked', revoked_at = $3, listed = false
          WHERE principal = $1 AND agent_id = $2 AND listed RETURNING *`,
        [principal, agentId, now],
      ),
    ).map(toRecord);
    if (events !== undefined) {
      for (const record of expired) await events.expired(record, manager);
      for (const record of revoked) await events.revoked(record, manager);
    }
    return { revoked, expired };
  }

  /**
   * The sync state and its version in one statement, so the version is exactly the one
   * of the rows returned (one snapshot).
   */
  async syncSnapshot(filter: SyncFilter): Promise<SyncSnapshot> {
    const conditions = [
      'a.listed',
      "(a.persistence IS DISTINCT FROM 'session' OR a.agent_session_id = ANY($1::text[]))",
    ];
    const parameters: unknown[] = [filter.agentSessionIds];
    if (filter.principal !== undefined) {
      parameters.push(filter.principal);
      conditions.push('a.principal = $2');
    }
    const rows = await this.dataSource.query<SyncRow[]>(
      `SELECT v.version, a.id, a.principal, a.agent_id, a.tool_name, a.arguments_hash, a.params_pattern, a.status, a.persistence,
              a.consumed, a.agent_session_id, a.approved_at
         FROM approval_sync_version v
         LEFT JOIN approvals a ON ${conditions.join(' AND ')}
        ORDER BY a.principal COLLATE "C", a.agent_id, a.created_at, a.id`,
      parameters,
    );
    const version = Number(rows[0]?.version ?? 0);
    return { version, approvals: rows.filter((row): row is SyncRow & { id: string } => row.id !== null).map(toSynced) };
  }

  /** The current sync version. */
  async syncVersion(): Promise<number> {
    const rows = await this.dataSource.query<{ version: string }[]>('SELECT version FROM approval_sync_version');
    return Number(rows[0]?.version ?? 0);
  }

  /**
   * Makes the time-based exits due at `now` (idempotent: replicas sweeping at once change
   * each row once). Returns how many records left the sync state. `expired` runs,
   * in the same transaction, for each pending request that expired (not for a one-time
   * denial leaving the sync state: it was decided, not expired).
   */
  async expireDue(now: Date, expired?: WithinTransaction<ApprovalRecord>): Promise<number> {
    if (expired === undefined) return rowsOf(await this.dataSource.query(`${EXPIRE_DUE} RETURNING id`, [now])).length;
    return this.dataSource.transaction(async (manager) => {
      const rows = rowsOf<ApprovalRow>(await manager.query(`${EXPIRE_DUE} RETURNING *`, [now]));
      // RETURNING shows the new status: 'expired' only for a row that was pending (a listed row is never already expired).
      for (const row of rows) if (row.status === 'expired') await expired(toRecord(row), manager);
      return rows.length;
    });
  }

  /** When the next listed record leaves the sync state by time, if any. */
  async nextExpiry(): Promise<Date | undefined> {
    const rows = await this.dataSource.query<{ next: Date | null }[]>(
      'SELECT min(expires_at) AS next FROM approvals WHERE listed AND expires_at IS NOT NULL',
    );
    return rows[0]?.next ?? undefined;
  }

  /** One conditional UPDATE; with `events`, in a transaction with the events of the record it changed (none when it changed nothing). */
  private async transition(
    events: WithinTransaction<ApprovalRecord> | undefined,
    sql: string,
    parameters: unknown[],
  ): Promise<ApprovalRecord | undefined> {
    if (events === undefined) {
      const rows = rowsOf<ApprovalRow>(await this.dataSource.query(sql, parameters));
      return rows[0] ? toRecord(rows[0]) : undefined;
    }
    return this.dataSource.transaction(async (manager) => {
      const row = rowsOf<ApprovalRow>(await manager.query(sql, parameters))[0];
      if (row === undefined) return undefined;
      const record = toRecord(row);
      await events(record, manager);
      return record;
    });
  }

  private async assertWithinLimits(
    manager: EntityManager,
    principal: string,
    agentId: string,
    limits: CreationLimits,
    now: Date,
  ): Promise<void> {
    const windowStart = new Date(now.getTime() - limits.windowMs);
    const rows = await manager.query<
      { pending: string; recent: string; first_expiry: Date | null; first_recent: Date | null }[]
    >(
      `SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
              count(*) FILTER (WHERE created_at > $3) AS recent,
              min(expires_at) FILTER (WHERE status = 'pending') AS first_expiry,
              min(created_at) FILTER (WHERE created_at > $3) AS first_recent
         FROM approvals WHERE principal = $1 AND agent_id = $2`,
      [principal, agentId, windowStart],
    );
    const counts = rows[0];
    if (counts === undefined) return;
    if (Number(counts.pending) > limits.maxPending) {
      throw new LimitReached({
        kind: 'rate_limited',
        limit: 'pending',
        retryAfterMs: (counts.first_expiry?.getTime() ?? now.getTime()) - now.getTime(),
      });
    }
    if (Number(counts.recent) > limits.maxPerWindow) {
      throw new LimitReached({
        kind: 'rate_limited',
        limit: 'per_window',
        retryAfterMs: (counts.first_recent?.getTime() ?? now.getTime()) + limits.windowMs - now.getTime(),
      });
    }
  }
}
