import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ApiFailure } from '../api/client';
import { Logo } from '../components/AgentLogo';
import { leaveFor } from './navigation';
import { useReturnExpired } from './request-expiry';

/** Why the application could not be told, in words. */
function returnFailure(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.code === 'session_used')
      return 'This request was answered in another tab or on another device, so nothing more is sent to the application.';
    if (error.code === 'invalid_redirect_uri')
      return 'The application’s return address is no longer allowed, so nothing was sent to it. Start again from the application.';
    if (error.code === 'session_expired')
      return 'The request ended too long ago for the application to be told. Go back to it yourself and start again.';
  }
  return 'The application could not be told. Go back to it yourself and start again.';
}

/**
 * The consent page of a request that expired while it was open: no form, nothing to allow. It says
 * so at the top (focus moves to the heading, so a screen reader reads it out), and offers the way
 * back: the broker tells the waiting application the request ended (RFC 6749 §4.1.2.1
 * `access_denied`) and sends the person there; or the agent's own page without the request.
 */
export function ExpiredRequest({
  agentId,
  agentName,
  logoUrl,
  sessionToken,
  host,
  onReview,
}: {
  agentId: string;
  agentName: string;
  logoUrl: string | null | undefined;
  sessionToken: string;
  /** Where the request returns to (its redirect_uri's host), when known. */
  host: string | null;
  onReview: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  const back = useReturnExpired(agentId, sessionToken);
  const [leaving, setLeaving] = useState<string | null>(null);
  useEffect(() => {
    heading.current?.focus();
  }, []);

  function returnToApplication() {
    if (back.isPending || leaving !== null) return;
    back.mutate(undefined, {
      onSuccess: ({ redirect_url }) => {
        setLeaving(`Returning you to ${agentName}…`);
        if (!leaveFor(redirect_url)) setLeaving(`${agentName} was told. You can close this page.`);
      },
    });
  }

  const offered = !back.isError && leaving === null;
  return (
    <div className="consent-page">
      <header className="consent-header">
        <Logo url={logoUrl} name={agentName} />
        <div>
          <h1 ref={heading} tabIndex={-1} className="consent-expired-title">
            This request has expired
          </h1>
          <p className="consent-muted">
            {agentName} asked to act for you, and the request ended before you answered. Nothing was allowed.
          </p>
        </div>
      </header>
      <section className="panel consent-expired" aria-labelledby="consent-expired-next">
        <h2 id="consent-expired-next">What you can do</h2>
        <p>
          {offered
            ? `Return to ${agentName}: it is told that the request expired, and you can start again from there.`
            : 'To let the agent act for you, go back to the application that sent you here and start again.'}
          {offered && host !== null ? (
            <>
              {' '}
              You go back to <strong className="mono">{host}</strong>.
            </>
          ) : null}
        </p>
        <p className="consent-muted">To see or change what {agentName} may do, review its access.</p>
        {back.isError ? (
          <p className="notice warning" role="alert">
            {returnFailure(back.error)}
          </p>
        ) : null}
        <p className="consent-decision-hint" role="status">
          {leaving ?? ''}
        </p>
        <div className="actions consent-error-actions">
          {offered ? (
            <button type="button" className="button primary" disabled={back.isPending} onClick={returnToApplication}>
              {back.isPending ? 'Returning…' : `Return to ${agentName}`}
            </button>
          ) : null}
          <button type="button" className="button" disabled={leaving !== null} onClick={onReview}>
            Review this agent&apos;s access
          </button>
          <Link className="button" to="/agents">
            Your agents
          </Link>
        </div>
      </section>
    </div>
  );
}
