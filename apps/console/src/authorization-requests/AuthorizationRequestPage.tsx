import { useEffect, useState } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { useAuthorizationRequest } from '../api/queries';
import { useFocusedPage } from '../components/focus';
import { usePageTitle } from '../components/page-title';
import { CALLBACK_PARAMS, readCallback, type CallbackResult } from '../connections/callback';
import { requestDeadline, useDeadlinePassed } from '../consent/request-expiry';
import { ErrorView, isUuid, Loading } from '../errors/ErrorView';
import { ConnectStep } from './ConnectStep';
import { ConsentStep } from './ConsentStep';
import { Answered, Expired, InvalidRequestLink, SomeoneElses } from './Outcome';
import type { AuthorizationRequestView } from './types';

/**
 * `/authorization-requests/:id`: the link a gateway showed the person when the broker refused its agent access to a
 * service. One focused page: allow (or deny), connect the account if needed, then "Done". The request lives at the
 * broker, so leaving and coming back (or reloading) shows it as it is now.
 */
export function AuthorizationRequestPage() {
  const { id = '' } = useParams();
  if (!isUuid(id)) return <InvalidRequestLink />;
  return <AuthorizationRequest key={id} id={id} />;
}

/** What the page is showing: the request's state, as read, and as this page changed it. */
type Shown =
  | { kind: 'loading' }
  | { kind: 'failed'; error: unknown }
  | { kind: 'someone-else' }
  | { kind: 'invalid' }
  | { kind: 'expired'; view: AuthorizationRequestView }
  | { kind: 'consent'; view: AuthorizationRequestView }
  | { kind: 'connect'; view: AuthorizationRequestView }
  | { kind: 'answered'; view: AuthorizationRequestView; now: boolean };

const TITLES: Record<Shown['kind'], (view?: AuthorizationRequestView) => string> = {
  loading: () => 'Authorization request',
  failed: () => 'Authorization request',
  'someone-else': () => 'This link is for someone else',
  invalid: () => 'Link not valid',
  expired: () => 'Link expired',
  consent: (view) => `Allow ${view?.agent.display_name ?? 'the agent'}?`,
  connect: (view) => `Connect ${view?.service.display_name ?? 'the service'}`,
  answered: (view) => (view?.status === 'denied' ? 'Request denied' : 'Done'),
};

function AuthorizationRequest({ id }: { id: string }) {
  const [params, setParams] = useSearchParams();
  // The connect callback's result, read once; the address bar loses its parameters right after (below).
  const [callback] = useState<CallbackResult | null>(() => readCallback(params));
  useEffect(() => {
    if (!CALLBACK_PARAMS.some((name) => params.has(name))) return;
    const rest = new URLSearchParams(params);
    for (const name of CALLBACK_PARAMS) rest.delete(name);
    setParams(rest, { replace: true });
  }, [params, setParams]);

  const request = useAuthorizationRequest(id);
  const view = request.data;
  // Answered on this page (Allow, Deny, or back from connecting): "Done" or "You denied", not "already used".
  const [answeredHere, setAnsweredHere] = useState(callback?.kind === 'success');
  // Counted down from the broker's `expires_in` (its own clock) while the request waits.
  const deadline =
    view !== undefined && view.status === 'pending' ? requestDeadline(request.dataUpdatedAt, view.expires_in) : null;
  const timedOut = useDeadlinePassed(deadline);
  // An Allow or Deny on its way when the time is up is not cut off: the broker's answer decides.
  const [sending, setSending] = useState(false);

  const shown = show(request.error, view, timedOut && !sending, answeredHere);
  useFocusedPage(shown.kind === 'consent' || shown.kind === 'connect');
  usePageTitle(TITLES[shown.kind]('view' in shown ? shown.view : undefined));

  switch (shown.kind) {
    case 'loading':
      return <Loading label="Loading the request…" />;
    case 'failed':
      return <ErrorView error={shown.error} page />;
    case 'someone-else':
      return <SomeoneElses />;
    case 'invalid':
      return <InvalidRequestLink />;
    case 'expired':
      return <Expired view={shown.view} />;
    case 'consent':
      return (
        <ConsentStep
          view={shown.view}
          deadline={deadline}
          onSending={setSending}
          onAnswered={() => setAnsweredHere(true)}
        />
      );
    case 'connect':
      return (
        <ConnectStep
          view={shown.view}
          failure={callback?.kind === 'error' ? callback : null}
          allowedHere={answeredHere}
        />
      );
    case 'answered':
      return <Answered view={shown.view} now={shown.now} />;
  }
}

function show(
  error: unknown,
  view: AuthorizationRequestView | undefined,
  timedOut: boolean,
  answeredHere: boolean,
): Shown {
  if (view === undefined) {
    if (error === null) return { kind: 'loading' };
    if (error instanceof ApiFailure && error.status === 403) return { kind: 'someone-else' };
    if (error instanceof ApiFailure && (error.status === 404 || error.status === 400)) return { kind: 'invalid' };
    return { kind: 'failed', error };
  }
  if (view.status === 'expired' || (view.status === 'pending' && timedOut)) return { kind: 'expired', view };
  if (view.status === 'pending') return view.step === 'connect' ? { kind: 'connect', view } : { kind: 'consent', view };
  return { kind: 'answered', view, now: answeredHere };
}
