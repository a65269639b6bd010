import { Link } from 'react-router';
import { ApiFailure } from '../api/client';
import { ErrorView } from '../errors/ErrorView';

/** The consent page's own failures in words; anything else is the console's one error view. */
function explain(error: unknown, withRequest: boolean): { title: string; detail: string } | null {
  if (!(error instanceof ApiFailure)) return null;
  if (error.status === 400 && error.code === 'session_expired')
    return {
      title: 'This request has expired',
      detail:
        'Requests to allow an agent are open for a few minutes, and this one has ended (or its link is incomplete). Nothing was allowed. Go back to the application that sent you here and start again.',
    };
  if (error.status === 403 && withRequest)
    return {
      title: 'This request is for someone else',
      detail:
        'The agent asked for another account than the one you are signed in with. Sign in as that person, or start again from the application.',
    };
  if (error.status === 404)
    return {
      title: 'Agent not found',
      detail: 'There is no agent at this address. It may have been removed by your administrator.',
    };
  if (error.status === 400 && (error.code === 'invalid_permission_set' || error.code === 'invalid scopes'))
    return {
      title: "The agent's permissions have changed",
      detail:
        'Your administrator changed what this agent may ask for while you were deciding. Reload the page and review it again.',
    };
  if (error.status === 409 && error.code === 'session_used')
    return {
      title: 'This request was already answered',
      detail: 'It was answered in another tab or on another device. Nothing more is sent to the application.',
    };
  if (error.status === 400 && error.code === 'invalid_redirect_uri')
    return {
      title: 'The application can no longer be reached',
      detail: 'Its return address is no longer allowed, so nothing was sent back to it. Close this page.',
    };
  return null;
}

/** A failure of the consent page, never a blank page: expired or foreign request, unknown agent, changed permissions. */
export function ConsentError({
  error,
  withRequest,
  onDropRequest,
  asPage = false,
}: {
  error: unknown;
  withRequest: boolean;
  onDropRequest?: () => void;
  /** The page's only content: its title is the page's heading. */
  asPage?: boolean;
}) {
  const known = explain(error, withRequest);
  if (known === null) return <ErrorView error={error} page={asPage} />;
  const Title = asPage ? 'h1' : 'h2';
  const expired = error instanceof ApiFailure && (error.code === 'session_expired' || error.status === 403);
  return (
    <section className="panel error-view" role="alert">
      <Title>{known.title}</Title>
      <p>{known.detail}</p>
      {error instanceof ApiFailure && error.status === 404 ? (
        <p>
          <Link to="/agents">Back to your agents</Link>
        </p>
      ) : null}
      {expired && onDropRequest !== undefined ? (
        <div className="actions consent-error-actions">
          <Link className="button" to="/agents">
            Your agents
          </Link>
          <button type="button" className="button" onClick={onDropRequest}>
            Review this agent&apos;s access instead
          </button>
        </div>
      ) : null}
    </section>
  );
}
