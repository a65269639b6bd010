import { Link } from 'react-router';
import { NoIdentity } from './NoIdentity';
import { usePageTitle } from '../components/page-title';

interface Explained {
  readonly title: string;
  readonly detail: string;
  /** What the person can do, when not "go back and start again". */
  readonly action?: string;
}

/** A request the broker cannot read, and any code this page does not know. */
const INVALID_REQUEST: Explained = {
  title: "The application's request is not valid",
  detail: 'The request that brought you here is incomplete or malformed, so the broker cannot continue.',
};

/** What the broker's page says for each code it may name (the server's fixed list); never text from the request. */
const EXPLAINED: Readonly<Record<string, Explained>> = {
  invalid_client: {
    title: 'This application is not known to the broker',
    detail:
      'The application that sent you here is not registered with this broker, so the broker cannot ask you to allow it, nor send you back to it.',
  },
  invalid_redirect_uri: {
    title: 'The application sent you from an address the broker does not know',
    detail:
      'Its return address is not one registered for it, so the broker does not send you there: it could belong to someone else.',
  },
  unsupported_response_type: {
    title: "The application's request is not valid",
    detail: 'It asked for a kind of answer the broker does not give, so the broker cannot continue.',
  },
  invalid_request: INVALID_REQUEST,
  invalid_scope: {
    title: 'The application asked for access it cannot have',
    detail: 'It asked for permissions this broker does not give it.',
  },
  invalid_target: {
    title: 'The application asked for access it cannot have',
    detail: 'It asked for a service or server this broker does not give it.',
  },
  access_denied: {
    title: 'This request is not allowed',
    detail: 'The broker refused the application’s request.',
  },
  agent_suspended: {
    title: 'Suspended by your administrators',
    detail:
      'Your administrators have suspended this agent for now, so the broker does not let it ask for access or act for you. Nothing you allowed it before has been removed.',
    action: 'Ask your administrators when it will work again. You can still revoke its access on its page.',
  },
  server_error: {
    title: 'Something went wrong in the broker',
    detail: 'The broker could not handle the request. Try again in a moment from the application.',
  },
};

/** The error code the broker named in the page (a `broker-error` meta element), or undefined. */
function namedError(): string | undefined {
  return document.querySelector('meta[name="broker-error"]')?.getAttribute('content') ?? undefined;
}

/**
 * `/oauth2/authorize` in a browser when the broker refuses the request without sending the person back to the
 * application (RFC 6749 §4.1.2.1: an unknown client or an unregistered redirect_uri is never redirected to). The
 * server keeps the status (400, 401) and names the error by code only; this page says it in words and what to do.
 */
export function AuthorizeErrorPage() {
  const code = namedError() ?? 'invalid_request';
  usePageTitle(code === 'unauthenticated' ? 'Not signed in' : 'Request not accepted');
  if (code === 'unauthenticated') return <NoIdentity headingLevel={1} />;
  const { title, detail, action } = EXPLAINED[code] ?? INVALID_REQUEST;
  return (
    <section className="panel error-view focused-error" role="alert">
      <h1>{title}</h1>
      <p>{detail}</p>
      <p>
        <strong>What you can do:</strong>{' '}
        {action ??
          "Go back to the application and start again. If it happens again, tell the application's provider or your administrator; nothing was shared with the application."}
      </p>
      <p className="muted">
        You can close this page, or <Link to="/agents">see the agents that act for you</Link>.
      </p>
    </section>
  );
}
