import { Link } from 'react-router';
import { ApiFailure } from '../api/client';
import { asSentence } from '../components/words';

/** What a failed read means for the administrator, in words (never the answer's JSON). */
function explain(error: unknown): { title: string; detail: string } {
  if (error instanceof ApiFailure) {
    if (error.status === 401)
      return { title: 'Your sign-in ended', detail: 'Reload the page to sign in again through your sign-in proxy.' };
    if (error.status === 403) return { title: 'Not allowed', detail: asSentence(error.message) };
    if (error.status === 404) return { title: 'Not found', detail: asSentence(error.message) };
    if (error.status >= 500)
      return {
        title: 'The broker could not answer',
        detail: 'The broker met an error of its own. Try again in a moment; its log says more.',
      };
    return { title: 'Something went wrong', detail: asSentence(error.message) };
  }
  return { title: 'The broker cannot be reached', detail: 'Check your connection and try again.' };
}

/**
 * A failure in words. `page`: the view is the page's whole content, so its title is the page's level-one heading;
 * else it sits under the page's own.
 */
export function ErrorView({ error, page = false }: { readonly error: unknown; readonly page?: boolean }) {
  const { title, detail } = explain(error);
  const Heading = page ? 'h1' : 'h2';
  return (
    <section className="panel error-view" role="alert">
      <Heading>{title}</Heading>
      <p>{detail}</p>
    </section>
  );
}

/** Where a lost administrator can go: the console's pages. */
export function PageLinks() {
  return (
    <ul className="page-links">
      <li>
        <Link to="/">Overview</Link>
      </li>
      <li>
        <Link to="/agents">Agents</Link>
      </li>
      <li>
        <Link to="/services">Services</Link>
      </li>
      <li>
        <Link to="/activity">Activity</Link>
      </li>
    </ul>
  );
}

export function Loading({ label }: { readonly label: string }) {
  return (
    <p className="loading" role="status">
      {label}
    </p>
  );
}
