import { Link } from 'react-router';
import { ApiFailure } from '../api/client';
import { useMe } from '../api/queries';
import { ErrorView } from '../errors/ErrorView';
import { formatDate } from '../format';
import { StateHeader } from './StateHeader';
import type { AuthorizationRequestView } from './types';

/** Where to go from a request that is over: the console's pages about it. */
function Next({ agents = true }: { agents?: boolean }) {
  return (
    <div className="actions consent-error-actions">
      {agents ? (
        <Link className="button" to="/agents">
          Your agents
        </Link>
      ) : null}
      <Link className="button" to="/activity">
        Your activity
      </Link>
    </div>
  );
}

/**
 * Completed or denied. Answered on this page (`now`): "Done — you can return to <agent>" or "You denied …". Opened
 * again afterwards: the link was already used, what happened and when; nothing to press.
 */
export function Answered({ view, now }: { view: AuthorizationRequestView; now: boolean }) {
  const agent = view.agent.display_name;
  const service = view.service.display_name;
  const when = formatDate(view.answered_at);
  if (now && view.status === 'completed')
    return (
      <div className="consent-page ar-page">
        <StateHeader party={view.agent} title={`Done — you can return to ${agent}`}>
          {agent} can now use {service} for you. It finds out by itself: go back to it and carry on.
        </StateHeader>
        <section className="panel" aria-labelledby="ar-after">
          <h2 id="ar-after">Changed your mind?</h2>
          <p className="consent-muted">
            You can see or revoke what {agent} may do on your agents page, and {service} under Connections.
          </p>
          <Next />
        </section>
      </div>
    );
  if (now)
    return (
      <div className="consent-page ar-page">
        <StateHeader party={view.agent} title={`You denied ${agent} access to ${service}`}>
          {agent} is told no. Nothing you allowed before has changed.
        </StateHeader>
        <section className="panel" aria-labelledby="ar-after">
          <h2 id="ar-after">What now</h2>
          <p className="consent-muted">You can close this page. If {agent} asks again, you get a new link.</p>
          <Next />
        </section>
      </div>
    );
  return (
    <div className="consent-page ar-page">
      <StateHeader party={view.agent} title="This link was already used">
        {agent} asked for access to {service}
        {view.status === 'completed' ? `, and you allowed it on ${when}.` : `, and you denied it on ${when}.`}
      </StateHeader>
      <section className="panel" aria-labelledby="ar-after">
        <h2 id="ar-after">Nothing more to do here</h2>
        <p className="consent-muted">
          {view.status === 'completed'
            ? `To see or change what ${agent} may do, go to your agents.`
            : `If ${agent} still needs ${service}, it can ask you again: you get a new link.`}
        </p>
        <Next />
      </section>
    </div>
  );
}

/** The request ended (by the broker's clock, or this page's countdown) before it was answered. */
export function Expired({ view }: { view: AuthorizationRequestView }) {
  const agent = view.agent.display_name;
  const service = view.service.display_name;
  return (
    <div className="consent-page ar-page">
      <StateHeader party={view.agent} title="This link has expired">
        {agent} asked for access to {service}, and the link ended before it was answered. Nothing was allowed.
      </StateHeader>
      <section className="panel" aria-labelledby="ar-after">
        <h2 id="ar-after">What you can do</h2>
        <p>
          Ask {agent} again: it gets a new link for you. Links work for a few minutes only, so that an old one cannot be
          used later.
        </p>
        <Next />
      </section>
    </div>
  );
}

/** 403: the request was made for another person. Nothing changed; who is signed in is said, so the person sees why. */
export function SomeoneElses() {
  const me = useMe();
  const person = me.data?.data;
  return (
    <div className="consent-page ar-page">
      <StateHeader party={null} title="This link is for someone else">
        An agent asked another person for access, and this is their link. Nothing was changed.
      </StateHeader>
      <section className="panel" aria-labelledby="ar-who">
        <h2 id="ar-who">You are signed in as</h2>
        {person !== undefined ? (
          <p>
            <strong>{person.display_name}</strong>
            {person.display_name !== person.principal ? <span className="mono"> ({person.principal})</span> : null}
          </p>
        ) : null}
        <p className="consent-muted">
          If the link is yours, sign in as that account (or open the link in a private window and sign in there). If it
          was sent to you by mistake, there is nothing to do: close this page.
        </p>
      </section>
    </div>
  );
}

/** 404 or a malformed id: a mistyped, cut or forged link (an id is no credential; nothing is told about others'). */
export function InvalidRequestLink() {
  return (
    <div className="consent-page ar-page">
      <StateHeader party={null} title="This link is not valid">
        There is no request at this address: the link is incomplete, mistyped, or not from this broker.
      </StateHeader>
      <section className="panel" aria-labelledby="ar-after">
        <h2 id="ar-after">What you can do</h2>
        <p className="consent-muted">Copy the whole link the agent showed you, or ask the agent again for a new one.</p>
        <Next />
      </section>
    </div>
  );
}

/** Allow refused: 409 and 410 read the request again (the page then shows it); anything else in words. */
export function AnswerFailure({ error }: { error: unknown }) {
  if (error instanceof ApiFailure && (error.status === 409 || error.status === 410)) return null;
  return <ErrorView error={error} />;
}
