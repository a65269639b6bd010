import { useEffect, useId, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { useAffectedAgents, useConnections, useDisconnect, useRefreshConnection } from '../api/queries';
import type { components } from '../api/user-api';
import { Logo } from '../components/AgentLogo';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorView, Loading } from '../errors/ErrorView';
import { usePageTitle } from '../components/page-title';
import { CALLBACK_PARAMS, connectUrl, explainCallbackError, readCallback, type CallbackResult } from './callback';
import { formatDate } from '../format';

type Item = components['schemas']['SessionListItem'];
type Session = components['schemas']['SessionView'];
type AgentRef = components['schemas']['AgentRef'];

/** `/connections`: every configured service, its connection, Connect / Refresh / Reconnect / Disconnect. */
export function ConnectionsPage() {
  usePageTitle('Connections');
  const [params, setParams] = useSearchParams();
  // Read once: the address bar loses these parameters right after (below), the message stays.
  const [callback] = useState<CallbackResult | null>(() => readCallback(params));
  const [notice, setNotice] = useState<string | null>(null);
  const sessions = useConnections();

  useEffect(() => {
    if (!CALLBACK_PARAMS.some((name) => params.has(name))) return;
    const rest = new URLSearchParams(params);
    for (const name of CALLBACK_PARAMS) rest.delete(name);
    // React Router's replace is history.replaceState: the callback's parameters leave the address bar and history.
    setParams(rest, { replace: true });
  }, [params, setParams]);

  const items = sessions.data?.data;
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Connections</h1>
          <p>Your accounts with other services. Agents you allow act on them with your connection.</p>
        </div>
      </div>
      {callback !== null ? <CallbackNotice result={callback} items={items} /> : null}
      {notice !== null ? (
        <div className="notice success" role="status">
          {notice}
        </div>
      ) : null}
      {sessions.isPending ? (
        <Loading label="Loading your connections…" />
      ) : sessions.isError ? (
        <ErrorView error={sessions.error} />
      ) : sessions.data.data.length === 0 ? (
        <div className="panel empty">
          <p>No services are configured yet.</p>
          <p>Your administrator adds the services you can connect.</p>
        </div>
      ) : (
        <ul className="list" aria-label="Services">
          {sessions.data.data.map((item) => (
            <ServiceCard key={item.service.id} item={item} onNotice={setNotice} />
          ))}
        </ul>
      )}
    </>
  );
}

function CallbackNotice({ result, items }: { result: CallbackResult; items: readonly Item[] | undefined }) {
  const name = items?.find((item) => item.service.id === result.serviceId)?.service.display_name;
  if (result.kind === 'success') {
    return (
      <div className="notice success" role="status">
        {name !== undefined ? `${name} is connected.` : 'The service is connected.'}
      </div>
    );
  }
  // Only the console's words: the query's error_description (and an unknown code) could be anyone's.
  return (
    <div className="notice danger" role="alert">
      <strong>{name !== undefined ? `Connecting ${name} failed.` : 'Connecting failed.'}</strong>{' '}
      {explainCallbackError(result.code, name)}
      {result.code !== null ? <small className="notice-details">Details: {result.code}</small> : null}
    </div>
  );
}

/** The connection's state as one badge. */
function StateBadge({ session }: { session: Session | null }) {
  if (session === null) return <span className="badge">Not connected</span>;
  if (session.needs_reauthentication) return <span className="badge danger">Needs re-authentication</span>;
  if (session.is_expired) return <span className="badge warning">Access token expired</span>;
  return <span className="badge success">Connected</span>;
}

function ServiceCard({ item, onNotice }: { item: Item; onNotice: (text: string) => void }) {
  const { service, session } = item;
  const [refreshed, setRefreshed] = useState<string | null>(null);
  const refresh = useRefreshConnection(service.id, {
    onMutate: () => setRefreshed(null),
    onSuccess: (data) =>
      setRefreshed(
        data.access_token_expires_at === null
          ? 'Refreshed. The provider gave the new access token no expiry.'
          : `Refreshed. The access token now expires ${formatDate(data.access_token_expires_at)}.`,
      ),
  });
  return (
    <li className="card connection-card">
      <Logo url={service.logo_url} name={service.display_name} />
      <div className="card-body">
        <div className="approval-heading">
          <span className="card-title">{service.display_name}</span>
          <StateBadge session={session} />
        </div>
        {session === null ? (
          <div className="meta">
            <span>Not connected yet.</span>
          </div>
        ) : (
          <div className="meta">
            <span>Connected since {formatDate(session.initiated_at)}</span>
            <span>
              Access token{' '}
              {session.access_token_expires_at === null
                ? 'has no expiry'
                : `${session.is_expired ? 'expired' : 'expires'} ${formatDate(session.access_token_expires_at)}`}
            </span>
            <span>
              {session.dependent_agent_count} agent{session.dependent_agent_count === 1 ? '' : 's'} depend
              {session.dependent_agent_count === 1 ? 's' : ''} on it
            </span>
          </div>
        )}
        {session !== null && session.needs_reauthentication ? (
          <p className="card-note">
            The provider no longer accepts this connection. Reconnect to keep your agents working.
          </p>
        ) : null}
        {refresh.isError ? <RefreshFailure error={refresh.error} /> : null}
        {refreshed !== null ? (
          <p className="card-note success-text" role="status">
            {refreshed}
          </p>
        ) : null}
        {session !== null ? (
          <ConnectionActions
            service={service}
            needsReconnect={session.needs_reauthentication}
            refreshing={refresh.isPending}
            onRefresh={() => refresh.mutate()}
            onDisconnected={onNotice}
          />
        ) : null}
      </div>
      {session === null ? (
        <div className="actions">
          {/* A full navigation: the broker redirects to the provider, which comes back to this page. */}
          <a className="button primary" href={connectUrl(service.id)} aria-label={`Connect ${service.display_name}`}>
            Connect
          </a>
        </div>
      ) : null}
    </li>
  );
}

/**
 * A connected service's three actions, each with a sentence on what it does: the two that keep the connection
 * (Refresh, Reconnect) first, Disconnect set apart below them as the one that takes access away.
 */
function ConnectionActions({
  service,
  needsReconnect,
  refreshing,
  onRefresh,
  onDisconnected,
}: {
  service: Item['service'];
  needsReconnect: boolean;
  refreshing: boolean;
  onRefresh: () => void;
  onDisconnected: (text: string) => void;
}) {
  const id = useId();
  const name = service.display_name;
  return (
    <div className="connection-actions" role="group" aria-label={`Manage ${name}`}>
      <div className="connection-action">
        <button
          type="button"
          className="button"
          disabled={refreshing}
          aria-label={`Refresh ${name}`}
          aria-describedby={`${id}-refresh`}
          onClick={onRefresh}
        >
          {refreshing ? 'Refreshing…' : 'Refresh'}
        </button>
        <p id={`${id}-refresh`}>
          Gets a new access token now with the sign-in the broker keeps. You are not asked anything; your agents keep
          their access.
        </p>
      </div>
      <div className="connection-action">
        {/* A full navigation: the broker redirects to the provider, which comes back to this page. */}
        <a
          className={`button${needsReconnect ? ' primary' : ''}`}
          href={connectUrl(service.id)}
          aria-label={`Reconnect ${name}`}
          aria-describedby={`${id}-reconnect`}
        >
          Reconnect
        </a>
        <p id={`${id}-reconnect`}>
          Takes you to {name} to sign in again, for when Refresh fails or the connection stopped working. Your agents
          keep their access.
        </p>
      </div>
      <div className="connection-action connection-action-destructive">
        <DisconnectButton service={service} onDisconnected={onDisconnected} describedBy={`${id}-disconnect`} />
        <p id={`${id}-disconnect`}>
          Deletes the tokens the broker holds for {name}. Agents that use it lose access until you connect again.
        </p>
      </div>
    </div>
  );
}

/** 409 and 502 of the forced refresh, in words. */
function RefreshFailure({ error }: { error: unknown }) {
  let text: string;
  if (error instanceof ApiFailure && error.status === 409)
    text = 'This connection cannot be refreshed: there is no usable refresh token. Reconnect the service.';
  else if (error instanceof ApiFailure && error.status === 502)
    text = 'The provider refused the refresh or could not be reached. Try again later, or reconnect the service.';
  else if (error instanceof ApiFailure && error.status === 404) text = 'This service is no longer connected.';
  else if (error instanceof ApiFailure && error.status === 401) text = 'Your sign-in expired: reload the page.';
  else if (error instanceof ApiFailure) text = `Refreshing failed: ${error.message}`;
  else text = 'The broker cannot be reached. Check your connection and try again.';
  return (
    <p className="card-note danger-text" role="alert">
      {text}
    </p>
  );
}

/** Disconnect after a dialog that lists the agents that lose access. */
function DisconnectButton({
  service,
  onDisconnected,
  describedBy,
}: {
  service: Item['service'];
  onDisconnected: (text: string) => void;
  describedBy: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const affected = useAffectedAgents(service.id, open);
  const disconnect = useDisconnect(service.id, {
    onSuccess: (data) => {
      dialog.current?.close();
      const count = data.affected_agents.length;
      onDisconnected(
        `${service.display_name} is disconnected.${count === 0 ? '' : ` ${count} agent${count === 1 ? '' : 's'} lost access to it.`}`,
      );
    },
  });
  const show = () => {
    disconnect.reset();
    setOpen(true);
    dialog.current?.showModal();
  };
  const heading = `disconnect-${service.id}`;
  const agents: readonly AgentRef[] | undefined = affected.data?.data.affected_agents;
  return (
    <>
      <button
        type="button"
        className="button danger"
        aria-label={`Disconnect ${service.display_name}`}
        aria-describedby={describedBy}
        onClick={show}
      >
        Disconnect
      </button>
      <ConfirmDialog
        dialogRef={dialog}
        id={heading}
        title={`Disconnect ${service.display_name}?`}
        confirmLabel="Disconnect"
        busy={disconnect.isPending || affected.isPending}
        failure={disconnect.isError ? disconnect.error : null}
        onConfirm={() => disconnect.mutate()}
        onClose={() => setOpen(false)}
      >
        <p>
          The broker deletes the tokens it holds for you. The provider may still list the connection until you remove it
          there.
        </p>
        {affected.isPending ? (
          <Loading label="Finding the agents that depend on it…" />
        ) : affected.isError ? (
          <ErrorView error={affected.error} />
        ) : agents !== undefined && agents.length > 0 ? (
          <>
            <p>
              <strong>
                {agents.length} agent{agents.length === 1 ? '' : 's'} will lose access to {service.display_name}:
              </strong>
            </p>
            <ul className="affected-agents">
              {agents.map((agent) => (
                <li key={agent.agent_id}>{agent.display_name}</li>
              ))}
            </ul>
          </>
        ) : (
          <p>No agent depends on this connection.</p>
        )}
      </ConfirmDialog>
    </>
  );
}
