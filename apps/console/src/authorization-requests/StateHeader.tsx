import { useEffect, useRef, type ReactNode } from 'react';
import { Logo } from '../components/AgentLogo';
import type { AuthorizationRequestParty } from './types';

/**
 * The top of each of the page's states: the agent's (or service's) logo, the state's heading and a line under it.
 * The heading takes focus when the state appears, so a screen reader reads out what changed.
 */
export function StateHeader({
  party,
  title,
  children,
}: {
  party: AuthorizationRequestParty | null;
  title: string;
  children?: ReactNode;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [title]);
  return (
    <header className="consent-header">
      {party !== null ? <Logo url={party.logo_url} name={party.display_name} /> : null}
      <div>
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {children !== undefined ? <p className="consent-muted">{children}</p> : null}
      </div>
    </header>
  );
}
