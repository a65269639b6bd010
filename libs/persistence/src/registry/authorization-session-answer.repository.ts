import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';

/** How an authorization session was answered: Allow, Deny, or an error sent to the client by redirect. */
export type AuthorizationDecision = 'allowed' | 'denied' | 'error';

/** The one answer of an authorization session. */
export interface AuthorizationSessionAnswer {
  /** The session token's `jti`. */
  readonly sessionId: string;
  readonly principal: string;
  readonly agentId: string;
  readonly decision: AuthorizationDecision;
  readonly answeredAt: Date;
  /** Until when the answer is kept: no later than this can its session token be accepted. */
  readonly expiresAt: Date;
}

/** Expired answers each claim removes on its way. */
export const ANSWER_PURGE_PER_CLAIM = 2;

/**
 * The answer is recorded unless the session already has one. Concurrent claims of one
 * session, in any transactions on any replicas, meet at the primary key: exactly one sees
 * its row returned (a claim waiting for an uncommitted one gets nothing once that commits,
 * and wins if it rolls back). On the way, up to `ANSWER_PURGE_PER_CLAIM` answers whose
 * session token can no longer be accepted are deleted (oldest first, through the
 * `expires_at` index, skipping rows another claim holds): the table holds the live answers
 * plus at most what the last quiet period left, without a timer.
 */
const CLAIM = `WITH purged AS (
  DELETE FROM authorization_session_answers WHERE session_id IN (
    SELECT session_id FROM authorization_session_answers WHERE expires_at <= $5 AND session_id <> $1
     ORDER BY expires_at LIMIT ${ANSWER_PURGE_PER_CLAIM} FOR UPDATE SKIP LOCKED))
INSERT INTO authorization_session_answers (session_id, principal, agent_id, decision, answered_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (session_id) DO NOTHING
RETURNING 1 AS claimed`;

interface AnswerRow {
  session_id: string;
  principal: string;
  agent_id: string;
  decision: AuthorizationDecision;
  answered_at: Date;
  expires_at: Date;
}

/**
 * Answers of authorization sessions (the consent links of `/oauth2/authorize`), in the
 * database so every replica shares them: a session is answered once (docs/security.md).
 */
@Injectable()
export class AuthorizationSessionAnswerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Records `answer` as the session's one answer: true when this call gave it, false when
   * the session was already answered. With `manager`, inside that transaction, so the
   * answer commits or rolls back with what it decided (the grant of an Allow).
   */
  async claim(answer: AuthorizationSessionAnswer, manager: EntityManager = this.dataSource.manager): Promise<boolean> {
    const rows = await manager.query<{ claimed: number }[]>(CLAIM, [
      answer.sessionId,
      answer.principal,
      answer.agentId,
      answer.decision,
      answer.answeredAt,
      answer.expiresAt,
    ]);
    return rows.length === 1;
  }

  /** The principal's answer to the session, or undefined while it is unanswered (or another principal's). With `manager`, read in that transaction. */
  async find(
    principal: string,
    sessionId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<AuthorizationSessionAnswer | undefined> {
    const rows = await manager.query<AnswerRow[]>(
      'SELECT * FROM authorization_session_answers WHERE session_id = $1 AND principal = $2',
      [sessionId, principal],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return {
      sessionId: row.session_id,
      principal: row.principal,
      agentId: row.agent_id,
      decision: row.decision,
      answeredAt: row.answered_at,
      expiresAt: row.expires_at,
    };
  }
}
