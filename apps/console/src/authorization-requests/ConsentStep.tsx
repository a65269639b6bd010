import { useRef, useState, type FormEvent } from 'react';
import { Logo } from '../components/AgentLogo';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useAnswerAuthorizationRequest } from '../api/queries';
import { AccountNote } from '../consent/AccountNote';
import { ExpiryPicker } from '../consent/ExpiryPicker';
import { initialExpiry, validUntil, type Expiry } from '../consent/expiry';
import { isPast } from '../consent/request-expiry';
import { AnswerFailure } from './Outcome';
import { StateHeader } from './StateHeader';
import type { AuthorizationRequestView } from './types';

/** The time of day the link stops working, by this browser's clock (the broker's seconds left, counted from the read). */
function until(deadline: number | null): string | null {
  if (deadline === null) return null;
  return new Date(deadline).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/**
 * Pending, not yet allowed: who asks for which service, what it may do there in the service's words, how long (only
 * for a new grant: an existing one keeps its end), and Allow / Deny. Deny is confirmed first: the link is then used.
 */
export function ConsentStep({
  view,
  deadline,
  onSending,
  onAnswered,
}: {
  view: AuthorizationRequestView;
  deadline: number | null;
  onSending: (sending: boolean) => void;
  onAnswered: () => void;
}) {
  const agent = view.agent.display_name;
  const service = view.service.display_name;
  const [now] = useState(() => new Date());
  const [expiry, setExpiry] = useState<Expiry>(() => initialExpiry(undefined, now));
  const [expiryError, setExpiryError] = useState<string | null>(null);
  const { allow, deny } = useAnswerAuthorizationRequest(view.id);
  const busy = allow.isPending || deny.isPending;
  const denyDialog = useRef<HTMLDialogElement>(null);

  const handlers = {
    onSuccess: () => {
      onSending(false);
      onAnswered();
    },
    onError: () => onSending(false),
  };

  function submit(event: FormEvent) {
    event.preventDefault();
    if (busy || isPast(deadline)) return;
    let chosen: string | null = null;
    if (!view.grant_exists) {
      const value = validUntil(expiry, new Date());
      if ('error' in value) {
        setExpiryError(value.error);
        document.getElementById('consent-expiry-date')?.focus();
        return;
      }
      chosen = value.value;
    }
    setExpiryError(null);
    onSending(true);
    allow.mutate(chosen, handlers);
  }

  function confirmDeny() {
    if (busy) return;
    onSending(true);
    deny.mutate(undefined, {
      ...handlers,
      onSettled: () => denyDialog.current?.close(),
    });
  }

  const ends = until(deadline);
  return (
    <div className="consent-page ar-page">
      <StateHeader party={view.agent} title={`${agent} asks for access to ${service}`}>
        {agent} tried to use {service} for you and was stopped: you have not allowed it yet. Review what it asks for,
        then allow or deny.
      </StateHeader>
      {view.agent.description !== null && view.agent.description.length > 0 ? (
        <p className="consent-description ar-about">
          <span className="visually-hidden">About {agent}: </span>
          {view.agent.description}
        </p>
      ) : null}
      <AccountNote />
      <form className="ar-form" onSubmit={submit} noValidate aria-label={`Decide whether ${agent} may use ${service}`}>
        <section className="panel" aria-labelledby="ar-what">
          <h2 id="ar-what">What it may do</h2>
          <div className="consent-service-head ar-service">
            <Logo url={view.service.logo_url} name={service} />
            <span className="consent-service-name">{service}</span>
          </div>
          {view.service.description !== null && view.service.description.length > 0 ? (
            <p className="consent-muted">{view.service.description}</p>
          ) : null}
          {view.scopes.length > 0 ? (
            <ul className="consent-scopes" aria-label={`What ${agent} may do in ${service}`}>
              {view.scopes.map(({ scope, description }) => (
                <li key={scope}>
                  {description.length > 0 && description !== scope ? <span>{description}</span> : null}
                  <code className="consent-scope-code">{scope}</code>
                </li>
              ))}
            </ul>
          ) : (
            <p className="consent-muted">Use {service} for you, with no specific permissions.</p>
          )}
          {view.grant_exists ? (
            <p className="notice consent-return">
              {agent} already has access you gave it. Allow adds this to it, and it ends when that access does.
            </p>
          ) : null}
          {view.needs_connection ? (
            <p className="notice warning">
              {agent} uses your {service} account: after you allow, you connect it (you sign in at {service}).
            </p>
          ) : null}
        </section>
        {view.grant_exists ? null : (
          <ExpiryPicker
            value={expiry}
            onChange={(next) => {
              setExpiry(next);
              setExpiryError(null);
            }}
            error={expiryError}
            disabled={busy}
            now={now}
          />
        )}
        {allow.error !== null ? <AnswerFailure error={allow.error} /> : null}
        <div className="panel consent-decision">
          <p className="consent-decision-hint" role="status">
            {allow.isPending
              ? 'Allowing…'
              : deny.isPending
                ? 'Denying…'
                : `${agent} is waiting for your answer.${ends !== null ? ` This link works until ${ends}.` : ''}`}
          </p>
          <div className="actions">
            <button
              type="button"
              className="button danger"
              disabled={busy}
              onClick={() => {
                deny.reset();
                denyDialog.current?.showModal();
              }}
            >
              Deny
            </button>
            <button type="submit" className="button primary" disabled={busy}>
              {allow.isPending ? 'Allowing…' : 'Allow'}
            </button>
          </div>
        </div>
      </form>
      <ConfirmDialog
        dialogRef={denyDialog}
        id="ar-deny-title"
        title={`Deny ${agent} access to ${service}?`}
        confirmLabel="Deny"
        busy={deny.isPending}
        failure={deny.error !== null && !isSettledElsewhere(deny.error) ? deny.error : null}
        onConfirm={confirmDeny}
      >
        <p>
          {agent} is told you said no, and this link is used up. Nothing you allowed before changes. It can ask you
          again later.
        </p>
      </ConfirmDialog>
    </div>
  );
}

/** 409 and 410: the request is read again and the page shows what became of it. */
function isSettledElsewhere(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && 'status' in error && (error.status === 409 || error.status === 410)
  );
}
