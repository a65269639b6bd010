import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { ConnectServices, type ConnectFailure } from './ConnectServices';
import { ConsentError } from './ConsentError';
import type { AgentDetail, Grant, PermissionSet } from './types';
import { ExpiryPicker } from './ExpiryPicker';
import { initialExpiry, validUntil, type Expiry } from './expiry';
import { GrantConfirmation } from './GrantConfirmation';
import { useRequestAnswer } from './request-answer';
import { useSelection } from './selection';
import { isRequired, PermissionSetList } from './PermissionSetList';

/** A set delegates something: services, MCP servers, or both. */
function hasContent(set: PermissionSet): boolean {
  return set.services.length > 0 || set.resources.length > 0;
}

/**
 * The decision: permission sets (mandatory fixed on, optional chosen, the current grant pre-selected),
 * accounts to connect, the expiry, and Allow / Deny (or Cancel without an authorization request).
 */
export function ConsentForm({
  agentId,
  detail,
  grant,
  sessionToken,
  connectFailure = null,
  deadline = null,
  onExpired,
  onSending,
  asked,
}: {
  agentId: string;
  detail: AgentDetail;
  grant: Grant | null;
  sessionToken: string | null;
  connectFailure?: ConnectFailure | null;
  /** When the request stops being answerable (ms, this browser's clock); null without a request. */
  deadline?: number | null;
  /** The request turned out to have expired (on pressing Allow or Deny). */
  onExpired?: () => void;
  /** An answer is on its way (true) or came back refused (false): the request does not time out under it. */
  onSending?: (sending: boolean) => void;
  /** The scopes the request names, marked as asked for. */
  asked?: ReadonlySet<string>;
}) {
  const [now] = useState(() => new Date());
  const sets = detail.permission_sets;
  const services = useMemo(() => new Map(detail.services.map((service) => [service.id, service])), [detail.services]);
  const resources = useMemo(() => new Map(detail.resources.map((resource) => [resource.id, resource])), [detail]);
  // Pre-selected: the sets of the current grant, and those covering an MCP server the request asks for.
  const [selected, toggle] = useSelection(() => {
    const requested = new Set(detail.resources.filter((resource) => resource.requested).map((resource) => resource.id));
    const asked = sets
      .filter((set) => set.resources.some((entry) => requested.has(entry.resource_id)))
      .map((set) => set.id);
    return new Set(
      [...Object.keys(grant?.granted_permission_sets ?? {}), ...asked].filter((id) =>
        sets.some((set) => set.id === id),
      ),
    );
  });
  const [expiry, setExpiry] = useState<Expiry>(() => initialExpiry(grant ?? undefined, now));
  const [expiryError, setExpiryError] = useState<string | null>(null);
  const [saved, setSaved] = useState<Grant | null>(null);
  const { allow, busy, leaving, failure, answerable, send, decline } = useRequestAnswer(agentId, sessionToken, {
    deadline,
    onExpired,
    onSending,
  });
  const confirmation = useRef<HTMLElement>(null);

  useEffect(() => {
    if (saved !== null) confirmation.current?.focus();
  }, [saved]);

  const chosen = sets.filter((set) => (isRequired(set) || selected.has(set.id)) && hasContent(set));
  const unconnected = [...new Set(chosen.flatMap((set) => set.services.map((s) => s.service_id)))]
    .map((id) => services.get(id))
    .filter((s) => s !== undefined && s.connection_status === 'not_connected');

  function submit(event: FormEvent) {
    event.preventDefault();
    if (busy || chosen.length === 0 || !answerable()) return;
    const until = validUntil(expiry, new Date(), grant?.valid_until);
    if ('error' in until) {
      setExpiryError(until.error);
      document.getElementById('consent-expiry-date')?.focus();
      return;
    }
    setExpiryError(null);
    // Per set, the ids it delegates: its services and its MCP servers alike.
    const granted = Object.fromEntries(
      chosen.map((set) => [
        set.id,
        [...set.services.map((s) => s.service_id), ...set.resources.map((r) => r.resource_id)],
      ]),
    );
    send({ granted_permission_sets: granted, valid_until: until.value }, setSaved);
  }

  return (
    <form
      className="consent-form"
      onSubmit={submit}
      noValidate
      aria-label={`Decide what ${detail.agent.display_name} may do`}
    >
      {saved !== null ? (
        <GrantConfirmation
          ref={confirmation}
          grant={saved}
          agentName={detail.agent.display_name}
          sets={sets}
          services={services}
          resources={resources}
        />
      ) : null}
      <section className="panel consent-permissions" aria-labelledby="consent-permissions">
        <h2 id="consent-permissions">What it may do</h2>
        <fieldset className="consent-plain" aria-labelledby="consent-permissions" disabled={busy}>
          <PermissionSetList
            sets={sets}
            services={services}
            resources={resources}
            selected={selected}
            onToggle={toggle}
            disabled={busy}
            asked={asked}
            agentName={detail.agent.display_name}
          />
        </fieldset>
        {unconnected.length > 0 ? (
          <p className="notice warning consent-unconnected">
            The agent can use {unconnected.map((s) => s?.display_name).join(', ')} only once you connect your account
            there (Connect, under Third-party accounts).
          </p>
        ) : null}
      </section>
      <ConnectServices
        services={detail.services}
        agentId={agentId}
        sessionToken={sessionToken}
        failure={connectFailure}
      />
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
      {failure !== null ? <ConsentError error={failure} withRequest={sessionToken !== null} /> : null}
      <div className="panel consent-decision">
        <p className="consent-decision-hint" role="status">
          {leaving ??
            (chosen.length === 0
              ? 'Choose at least one permission set to allow.'
              : sessionToken !== null
                ? `${detail.agent.display_name} will receive access to what you chose.`
                : grant !== null
                  ? 'Allow replaces the access you gave before.'
                  : 'Allow gives the agent access to what you chose.')}
        </p>
        <div className="actions">
          {sessionToken !== null ? (
            <button type="button" className="button danger" disabled={busy} onClick={decline}>
              Deny
            </button>
          ) : (
            <Link className="button" to="/agents">
              Cancel
            </Link>
          )}
          <button type="submit" className="button primary" disabled={busy || chosen.length === 0}>
            {allow.isPending ? 'Allowing…' : 'Allow'}
          </button>
        </div>
      </div>
    </form>
  );
}
