import { Link } from 'react-router';
import type { components } from '../api/user-api';
import { formatDate } from '../format';

type Answer = components['schemas']['SessionAnswerView'];

/** The decision in the person's words. */
function decided(answer: Answer): string {
  switch (answer.decision) {
    case 'allowed':
      return 'you allowed it';
    case 'denied':
      return 'you denied it';
    case 'error':
      return 'it ended with an error';
  }
}

/**
 * A consent link opened again after it was answered (README "Security": answered once): what
 * was decided and when, with nothing left to press; the agent's access can still be reviewed
 * without the request.
 */
export function AnsweredRequest({ answer, onReview }: { answer: Answer; onReview: () => void }) {
  return (
    <section className="panel consent-answered" aria-labelledby="consent-answered">
      <h2 id="consent-answered">Request already answered</h2>
      <p className="notice consent-return" role="status">
        This request was already answered — {decided(answer)} on {formatDate(answer.answered_at)}.
      </p>
      <p className="consent-muted">
        Nothing more is sent to the application. To change what this agent may do, review its access.
      </p>
      <div className="actions consent-error-actions">
        <Link className="button" to="/agents">
          Your agents
        </Link>
        <button type="button" className="button" onClick={onReview}>
          Review this agent&apos;s access
        </button>
      </div>
    </section>
  );
}
