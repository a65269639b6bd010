import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import { Logo } from '../components/AgentLogo';

/**
 * A consent request's address opened where the request is not kept: answered or expired in another
 * tab, its token stripped from a copied address, or a new tab or window. Nothing here could reach
 * the waiting application, so nothing is offered to allow: only the ways on (start again from
 * the application; the agent's own page).
 */
export function LostRequest({
  agentName,
  logoUrl,
  onReview,
}: {
  agentName: string;
  logoUrl: string | null | undefined;
  onReview: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, []);
  return (
    <div className="consent-page">
      <header className="consent-header">
        <Logo url={logoUrl} name={agentName} />
        <div>
          <h1 ref={heading} tabIndex={-1}>
            This request is no longer here
          </h1>
          <p className="consent-muted">
            {agentName} asked to act for you, but this page no longer holds that request: it was answered or it expired,
            or this address was opened in another tab or window.
          </p>
        </div>
      </header>
      <section className="panel consent-expired" aria-labelledby="consent-lost-next">
        <h2 id="consent-lost-next">What you can do</h2>
        <ul className="consent-next-steps">
          <li>
            To let {agentName} act for you, go back to the application that sent you here and start again: it asks
            again, and its answer comes back to it.
          </li>
          <li>To see or change what {agentName} may do, review its access or open your agents.</li>
        </ul>
        <div className="actions consent-error-actions">
          <button type="button" className="button" onClick={onReview}>
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
