import { useEffect, useState } from 'react';
import { useRouteError } from 'react-router';
import { Brand } from '../components/Brand';
import { usePageTitle } from '../components/PageTitle';
import { PageLinks } from './ErrorView';
import { brokerAnswers, BrokerNotAnswering, PageFileMissing } from './page-loading';

/** How often the page asks whether the broker answers again while it says it does not. */
const PROBE_EVERY_MS = 5_000;

function reload(): void {
  window.location.reload();
}

/**
 * The broker stopped answering while a page's file was loading: said as the other pages' not-answering banner
 * says it, with Retry. The page asks the broker again by itself and reloads as soon as it answers (the reload
 * fetches the page's file; nothing the administrator changed lives only in this tab).
 */
function NotAnswering() {
  usePageTitle('The broker is not answering');
  const [checking, setChecking] = useState(false);
  const [stillDown, setStillDown] = useState(false);
  useEffect(() => {
    const timer = window.setInterval(() => {
      void brokerAnswers().then((answers) => {
        if (answers) reload();
      });
    }, PROBE_EVERY_MS);
    return () => window.clearInterval(timer);
  }, []);
  const retry = async () => {
    setChecking(true);
    const answers = await brokerAnswers();
    if (answers) {
      reload();
      return;
    }
    setChecking(false);
    setStillDown(true);
  };
  return (
    <section className="panel error-view" aria-labelledby="route-error-heading">
      <h1 id="route-error-heading">The broker is not answering</h1>
      <div className="notice warning reconnect" role="status">
        <span>
          <strong>This page could not be opened.</strong>{' '}
          {checking
            ? 'Checking…'
            : stillDown
              ? 'Still no answer. This page keeps trying and opens by itself once the broker is back.'
              : 'This page keeps trying and opens by itself once the broker is back.'}
        </span>
        <button type="button" className="button" disabled={checking} onClick={() => void retry()}>
          Retry
        </button>
      </div>
      <p>
        Nothing you saved is lost: the broker keeps it. If the broker stays unreachable, check your connection and
        whether the broker is being restarted.
      </p>
    </section>
  );
}

/** Reload, or go to another page of the console. */
function ReloadOrElsewhere() {
  return (
    <>
      <p>
        <button type="button" className="button primary" onClick={reload}>
          Reload
        </button>
      </p>
      <p>Or open another page:</p>
      <PageLinks />
    </>
  );
}

/** The page's file is missing although the broker answers, after the one automatic reload. */
function FileMissing() {
  usePageTitle('This page could not be loaded');
  return (
    <section className="panel error-view" role="alert" aria-labelledby="route-error-heading">
      <h1 id="route-error-heading">This page could not be loaded</h1>
      <p>
        The console was probably updated while this tab was open. It reloaded once by itself, and the page is still
        missing. Reload to try again; if it keeps happening, check the broker&apos;s log.
      </p>
      <ReloadOrElsewhere />
    </section>
  );
}

/** Anything else a page threw: in the console's words, never the error's own text or a stack. */
function Unexpected() {
  usePageTitle('Something went wrong');
  return (
    <section className="panel error-view" role="alert" aria-labelledby="route-error-heading">
      <h1 id="route-error-heading">Something went wrong on this page</h1>
      <p>
        The console met an error it did not expect. Nothing you saved is lost. Reload the page; if it happens again,
        check the broker&apos;s log.
      </p>
      <ReloadOrElsewhere />
    </section>
  );
}

/**
 * The router's error boundary for every page (instead of the router's developer page): the page's file not
 * loading (broker not answering, or gone after an upgrade: `page-loading.ts`) or an error while rendering.
 */
export function RouteError() {
  const error = useRouteError();
  if (error instanceof BrokerNotAnswering) return <NotAnswering />;
  if (error instanceof PageFileMissing) return <FileMissing />;
  return <Unexpected />;
}

/** The same, when the console's frame itself failed: the frame's brand around it, so the page is still ours. */
export function ShellError() {
  return (
    <div className="shell">
      <header className="topbar">
        <Brand />
      </header>
      <main className="content">
        <RouteError />
      </main>
    </div>
  );
}
