import { usePageTitle } from '../components/PageTitle';
import { PageLinks } from './ErrorView';

/** Any address the admin console has no page for (the server answers it with status 404). */
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
