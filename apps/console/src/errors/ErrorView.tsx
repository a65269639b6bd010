import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { NoIdentity } from './NoIdentity';
import { usePageTitle } from '../components/page-title';
import { hasSignedIn } from '../components/sign-in';

/** What a failure means for the person, in words (one error view for 401, 403, 404, network). */
function explain(error: unknown): { title: string; detail: string } {
  if (error instanceof ApiFailure) {
    if (error.status === 401) return { title: 'Your sign-in expired', detail: 'Reload the page to sign in again.' };
    if (error.status === 403) return { title: 'Not allowed', detail: error.message };
    if (error.status === 404) return { title: 'Not found', detail: error.message };
    if (error.status === 400 && error.code === 'session_expired')
      return {
        title: 'This request has expired',
        detail: 'Go back to the application that sent you here and start again.',
      };
    return { title: 'Something went wrong', detail: error.message };
  }
  return { title: 'The broker cannot be reached', detail: 'Check your connection and try again.' };
}

/**
 * The failure in words. `page`: the view is the page's whole content, so its title is the page's level-one heading
 * (a page without one is hard to find one's way in with a screen reader); else it sits under the page's own.
 */
export function ErrorView({ error, page = false }: { error: unknown; page?: boolean }) {
  // A 401 before the broker ever named the person: no identity arrived, nothing expired.
  if (error instanceof ApiFailure && error.status === 401 && !hasSignedIn()) return <NoIdentity />;
  const { title, detail } = explain(error);
  const Heading = page ? 'h1' : 'h2';
  return (
    <section className="panel error-view" role="alert">
      <Heading>{title}</Heading>
      <p>{detail}</p>
    </section>
  );
}

/** Where a lost person can go: the console's pages. */
export function PageLinks() {
  return (
    <ul className="page-links">
      <li>
        <Link to="/agents">Your agents</Link>
      </li>
      <li>
        <Link to="/connections">Connections</Link>
      </li>
      <li>
        <Link to="/approvals">Approvals</Link>
      </li>
      <li>
        <Link to="/activity">Activity</Link>
      </li>
    </ul>
  );
}

/** Any address the console has no page for (the server answers it with status 404). */
export function NotFound() {
  usePageTitle('Page not found');
  return (
    <section className="panel error-view" role="alert">
      <h1>Page not found</h1>
      <p>
        There is no page at this address: the link may be mistyped or out of date. These are the console&apos;s pages:
      </p>
      <PageLinks />
    </section>
  );
}

/** An address whose id cannot be one (`/agents/not-a-uuid`): said in words before asking the broker anything. */
export function InvalidLink({ what }: { what: 'agent' | 'approval' }) {
  usePageTitle('Link not valid');
  return (
    <section className="panel error-view" role="alert">
      <h1>This {what} link is not valid</h1>
      <p>
        The address is incomplete or mistyped. Open the {what} from{' '}
        {what === 'agent' ? 'your agents' : 'your approvals'} instead.
      </p>
      <p>{what === 'agent' ? <Link to="/agents">Your agents</Link> : <Link to="/approvals">Your approvals</Link>}</p>
    </section>
  );
}

/** The route's page when its `:id` can name one, else "This … link is not valid" (nothing is asked of the broker). */
export function WithValidId({ what, children }: { what: 'agent' | 'approval'; children: ReactNode }) {
  const { id = '' } = useParams();
  return isUuid(id) ? children : <InvalidLink what={what} />;
}

/** The ids the broker gives agents and approvals; anything else cannot name one. */
export function isUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
}

export function Loading({ label }: { label: string }) {
  return (
    <p className="loading" role="status">
      {label}
    </p>
  );
}
