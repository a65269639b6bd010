import { useRef, useState } from 'react';
import { Link } from 'react-router';
import {
  useConnections,
  useCurrentGrant,
  useDelegations,
  useEnterpriseAuthorizations,
  useLastUsed,
  usePendingApprovals,
  useRememberedApprovals,
  useRevokeEnterpriseAuthorization,
} from '../api/queries';
import type { components } from '../api/user-api';
import { Logo } from '../components/AgentLogo';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorView } from '../errors/ErrorView';
import { usePageTitle } from '../components/page-title';
import { RevokedNotice, useRevokedNotice } from '../components/RevokedNotice';
import { relativeTime } from '../activity/time';
import { formatDate, hostOf } from '../format';
import { PageRead } from '../components/PageRead';
import { RevokeButton, type ApprovalsOfAgent } from './RevokeButton';

type Delegation = components['schemas']['DelegationSummaryResponse'];
/** An MCP server the active grant lets the agent reach. */
type ReachedResource = components['schemas']['DelegatedResourceView'];
type LastUsed = components['schemas']['LastUsedView'];
/** What the person's organisation allowed an agent for one MCP server, through its identity provider. */
type OrganisationAllowed = components['schemas']['EnterpriseAuthorizationResponse'];
type Approval = components['schemas']['ApprovalView'];

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** A term of this page with its plain-words explanation one click away (a native disclosure: keyboard and screen readers). */
function Term({ label, children }: { label: string; children: string }) {
  return (
    <details className="term">
      <summary>{label}</summary>
      <p>{children}</p>
    </details>
  );
}

const MCP_SERVER = 'An MCP server is a service whose tools the agent calls for you; this broker lets the agent in.';

/** `/agents`: the agents the person has delegated to, with revoke. */
export function AgentsPage() {
  usePageTitle('Agents');
  const agents = useDelegations();
  const { notice, setNotice, heading } = useRevokedNotice();
  return (
    <>
      <div className="page-header">
        <div>
          <h1 ref={heading} tabIndex={-1}>
            Agents
          </h1>
          <p>Agents you have allowed to act for you, and until when.</p>
        </div>
      </div>
      <RevokedNotice notice={notice} />
      <PageRead query={agents} loading="Loading your agents…">
        {(data) => (
          <>
            <DelegationList items={data.data} onRevoked={setNotice} />
            {/* Below the person's own list, once it is there: a failure of both reads is said once, above. */}
            <OrganisationAllowedList onRevoked={setNotice} />
          </>
        )}
      </PageRead>
    </>
  );
}

/**
 * The agents the person's organisation allowed through its identity provider (no consent of the person
 * behind them, docs/console.md): each MCP server, the identity provider, the scopes and until when, with
 * revoke. Nothing is shown while there are none.
 */
function OrganisationAllowedList({ onRevoked }: { onRevoked: (text: string) => void }) {
  const allowed = useEnterpriseAuthorizations();
  if (allowed.data === undefined) return allowed.isError ? <ErrorView error={allowed.error} /> : null;
  if (allowed.data.data.length === 0) return null;
  return (
    <section className="organisation-allowed" aria-labelledby="organisation-allowed-heading">
      <h2 id="organisation-allowed-heading">Allowed by your organisation</h2>
      <p className="muted">
        Your organisation&apos;s identity provider let these agents use MCP servers as you. An MCP server is a service
        whose tools the agent calls for you. Each one stays listed while the agent&apos;s current sign-in lasts: your
        organisation can sign it in again without asking you. You can revoke any of them here.
      </p>
      <ul className="list" aria-label="Agents allowed by your organisation">
        {allowed.data.data.map((item) => (
          <li key={item.id} className="card">
            <Logo url={item.agent_logo_url} name={item.agent_display_name} />
            <div className="card-body">
              <div className="card-title organisation-allowed-title">
                <span>{item.agent_display_name}</span>
                <span className="badge requested">Allowed by your organisation</span>
              </div>
              <div className="meta">
                <span>
                  Identity provider: <span className="mono">{hostOf(item.issuer)}</span>
                </span>
                {/* The token's end, not the end of what the organisation allowed: its identity provider can renew it. */}
                <span>Current sign-in ends {formatDate(item.expires_at)}</span>
              </div>
              <ul className="usage mcp-access" aria-label={`MCP server ${item.agent_display_name} may use`}>
                <li>
                  <span className="usage-service">{item.resource_display_name ?? 'MCP server'}</span>
                  <span className="usage-when mono">{item.resource_uri}</span>
                </li>
              </ul>
              <OrganisationPermissions item={item} />
            </div>
            <RevokeOrganisationAccess item={item} onRevoked={onRevoked} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** What the organisation allowed the agent to do, in the MCP server's words (the scope code as secondary text). */
function OrganisationPermissions({ item }: { item: OrganisationAllowed }) {
  if (item.permissions.length === 0) return null;
  return (
    <ul className="usage" aria-label={`What ${item.agent_display_name} may do`}>
      {item.permissions.map((permission) =>
        permission.description === null ? (
          <li key={permission.scope}>
            <span className="mono">{permission.scope}</span>
          </li>
        ) : (
          <li key={permission.scope}>
            <span>{permission.description}</span>
            <span className="usage-when mono">{permission.scope}</span>
          </li>
        ),
      )}
    </ul>
  );
}

/** Revoke what the organisation allowed, with a confirmation that says what stops and what does not. */
function RevokeOrganisationAccess({
  item,
  onRevoked,
}: {
  item: OrganisationAllowed;
  onRevoked: (text: string) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const name = item.agent_display_name;
  const server = item.resource_display_name ?? item.resource_uri;
  const revoke = useRevokeEnterpriseAuthorization(item.id, {
    onMutate: () => setFailure(null),
    onSuccess: () => {
      dialog.current?.close();
      onRevoked(`Revoked what your organisation allowed ${name} on ${server}: its current tokens no longer work.`);
    },
    onError: setFailure,
  });
  return (
    <>
      <button
        type="button"
        className="button danger"
        aria-label={`Revoke ${name}'s access to ${server}`}
        onClick={() => {
          setFailure(null);
          dialog.current?.showModal();
        }}
      >
        Revoke
      </button>
      <ConfirmDialog
        dialogRef={dialog}
        id={`revoke-organisation-${item.id}`}
        title={`Revoke ${name}'s access to ${server}?`}
        confirmLabel="Revoke access"
        busy={revoke.isPending}
        failure={failure}
        onConfirm={() => revoke.mutate()}
      >
        <p>
          Your organisation allowed {name} to use {server} as you. Its current tokens stop working at once.
        </p>
        <p>Your organisation&apos;s identity provider can allow it again. To stop that, ask your administrator.</p>
      </ConfirmDialog>
    </>
  );
}

function DelegationList({ items, onRevoked }: { items: readonly Delegation[]; onRevoked: (text: string) => void }) {
  // When each agent last used each service, and the services' names.
  const lastUsed = useLastUsed();
  const services = useConnections();
  // What a revocation ends besides the grant: the agent's remembered decisions and waiting requests.
  const remembered = useRememberedApprovals();
  const waiting = usePendingApprovals();
  const approvalsOf = (agentId: string): ApprovalsOfAgent => {
    const count = (list: readonly Approval[] | undefined) => list?.filter((a) => a.agent_id === agentId).length;
    return { remembered: count(remembered.data?.data), waiting: count(waiting.data?.data) };
  };
  const serviceNames = new Map(services.data?.data.map((item) => [item.service.id, item.service.display_name]));
  if (items.length === 0)
    return (
      <div className="panel empty">
        <p>You have not allowed any agent to act for you.</p>
        <p>When an agent asks for access, you will decide here.</p>
      </div>
    );
  return (
    <ul className="list" aria-label="Agents with access">
      {items.map((item) => (
        <li key={item.agent_id} className="card">
          <Logo url={item.logo_url} name={item.display_name} />
          <div className="card-body">
            <div className="card-title">
              <Link to={`/agents/${item.agent_id}`}>{item.display_name}</Link>
            </div>
            <div className="meta">
              {item.active_grant_count > 0 || item.resources.length === 0 ? (
                <span>
                  {item.active_grant_count} service{item.active_grant_count === 1 ? '' : 's'}
                </span>
              ) : null}
              {item.resources.length > 0 ? (
                <Term label={plural(item.resources.length, 'MCP server', 'MCP servers')}>{MCP_SERVER}</Term>
              ) : null}
              <span>Expires: {item.expires_at === null ? 'no expiry' : formatDate(item.expires_at)}</span>
              <span>Changed {formatDate(item.last_modified_at)}</span>
              <LiveSessions count={item.live_sessions} />
            </div>
            {lastUsed.data !== undefined ? (
              <ServiceUsage
                agentId={item.agent_id}
                name={item.display_name}
                used={lastUsed.data.data}
                serviceNames={serviceNames}
                resources={item.resources}
              />
            ) : null}
            <McpAccess name={item.display_name} resources={item.resources} />
          </div>
          <RevokeButton
            agentId={item.agent_id}
            name={item.display_name}
            liveSessions={item.live_sessions}
            approvals={approvalsOf(item.agent_id)}
            onRevoked={onRevoked}
          />
        </li>
      ))}
    </ul>
  );
}

/** Each service the agent's grant delegates, with when the agent last used it. */
function ServiceUsage({
  agentId,
  name,
  used,
  serviceNames,
  resources,
}: {
  agentId: string;
  name: string;
  used: readonly LastUsed[];
  serviceNames: ReadonlyMap<string, string>;
  resources: readonly ReachedResource[];
}) {
  const grant = useCurrentGrant(agentId);
  if (grant.data === undefined || grant.data === null) return null;
  // A grant delegates services and MCP servers alike; the MCP servers are listed apart.
  const resourceIds = new Set(resources.map((resource) => resource.id));
  // By name, so the order stays the same whatever the grant's permission sets are.
  const serviceIds = [...new Set(Object.values(grant.data.granted_permission_sets).flat())]
    .filter((id) => !resourceIds.has(id))
    .sort((a, b) => (serviceNames.get(a) ?? '').localeCompare(serviceNames.get(b) ?? ''));
  if (serviceIds.length === 0) return null;
  const now = new Date();
  return (
    <ul className="usage" aria-label={`When ${name} last used each service`}>
      {serviceIds.map((serviceId) => {
        const at = used.find((entry) => entry.agent_id === agentId && entry.service_id === serviceId)?.last_used_at;
        return (
          <li key={serviceId}>
            <span className="usage-service">{serviceNames.get(serviceId) ?? 'Service'}</span>
            <span className="usage-when">
              {at === undefined ? (
                'Not used yet'
              ) : (
                <>
                  Last used{' '}
                  <time dateTime={at} title={formatDate(at)}>
                    {relativeTime(at, now)}
                  </time>
                </>
              )}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/** The MCP servers the agent may reach (the broker issues their tokens): names, with the address as secondary text. */
function McpAccess({ name, resources }: { name: string; resources: readonly ReachedResource[] }) {
  if (resources.length === 0) return null;
  return (
    <ul className="usage mcp-access" aria-label={`MCP servers ${name} may use`}>
      {resources.map((resource) => (
        <li key={resource.id}>
          <span className="usage-service">{resource.display_name}</span>
          <span className="usage-when mono">{resource.resource_uri}</span>
        </li>
      ))}
    </ul>
  );
}

/** How many sign-ins of the agent can renew its access without asking the person again (never a token), explained. */
function LiveSessions({ count }: { count: number }) {
  if (count === 0)
    return (
      <Term label="No active sign-in">
        The agent holds no sign-in for this right now. It gets one the next time it asks, as long as you allow it.
      </Term>
    );
  return (
    <Term label={plural(count, 'active sign-in', 'active sign-ins')}>
      Places where this agent is signed in as you: each can renew its access without asking you again, until you revoke
      it.
    </Term>
  );
}
