import { ApiError, Clock, type Principal } from '@broker/domain';
import { AUTHORIZATION_SESSION_RETURN_SECONDS, type AuthorizationSession } from '@broker/oauth-server';
import {
  AuthorizationSessionAnswerRepository,
  type AuthorizationDecision,
  type AuthorizationSessionAnswer,
  type WithinTransaction,
} from '@broker/persistence';
import { Injectable } from '@nestjs/common';

/** The transaction an answer joins (the grant write of an Allow). */
type Transaction = Parameters<WithinTransaction<unknown>>[1];

/**
 * Answers kept past the token's `exp` by this much, so a replica whose clock runs behind
 * still finds the answer while it would accept the token.
 */
const CLOCK_SKEW_MS = 60_000;

/**
 * How long an answer is kept past the token's `exp`: as long as any route accepts the token (an
 * expired request still returns to the client for a while), plus the clock skew above. An
 * answer gone while the token is still accepted would let the token answer twice.
 */
const KEPT_PAST_EXPIRY_MS = AUTHORIZATION_SESSION_RETURN_SECONDS * 1000 + CLOCK_SKEW_MS;

/**
 * An authorization session (a consent link) is answered once: Allow, Deny, or an error
 * sent to the client by redirect ends it (docs/security.md). The answer is recorded under
 * the session token's `jti` by one atomic claim, so of two answers racing (two tabs, two
 * replicas) exactly one wins; every later one is 409 `session_used` naming the decision,
 * and never yields a second `redirect_url`, so never a second code or redirect.
 */
@Injectable()
export class AuthorizationSessionAnswers {
  constructor(
    private readonly answers: AuthorizationSessionAnswerRepository,
    private readonly clock: Clock,
  ) {}

  /** The session's answer, or undefined while it is pending. */
  answerOf(session: AuthorizationSession): Promise<AuthorizationSessionAnswer | undefined> {
    return this.answers.find(session.principal, session.id);
  }

  /** Refuses a session already answered: 409 `session_used`. */
  async assertPending(session: AuthorizationSession): Promise<void> {
    const answer = await this.answerOf(session);
    if (answer !== undefined) throw used(answer);
  }

  /**
   * Ends the session with `decision`, or refuses with 409 `session_used` when it already
   * ended. With `transaction`, the answer commits or rolls back with it.
   */
  async answer(
    session: AuthorizationSession,
    principal: Principal,
    decision: AuthorizationDecision,
    transaction?: Transaction,
  ): Promise<void> {
    const answer: AuthorizationSessionAnswer = {
      sessionId: session.id,
      principal: principal.id,
      agentId: session.agentId,
      decision,
      answeredAt: this.clock.now(),
      expiresAt: new Date(session.expiresAt.getTime() + KEPT_PAST_EXPIRY_MS),
    };
    if (await this.answers.claim(answer, transaction)) return;
    const earlier = await this.answers.find(principal.id, session.id, transaction);
    throw earlier === undefined
      ? new ApiError('session_used', 'this authorization request was already answered')
      : used(earlier);
  }
}

/** 409 `session_used`, saying what the earlier answer was and when. */
function used(answer: AuthorizationSessionAnswer): ApiError {
  const what = answer.decision === 'error' ? 'it ended with an error' : `it was ${answer.decision}`;
  return new ApiError(
    'session_used',
    `this authorization request was already answered: ${what} at ${answer.answeredAt.toISOString()}; start the authorization again from the application`,
  );
}
