import { useState } from 'react';
import type { ApiFailure } from '../api/client';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { WriteButton } from '../components/ReadOnly';
import { ErrorView, Loading } from '../errors/ErrorView';
import { formatDate, listInWords, plural } from './format';
import { useAgentGrants, useRevokeAllGrants, useRevokeGrant } from './queries';
import type { AdminGrant } from './types';

/** The people named in a confirmation: all of them when few, else the first ones and how many more. */
const NAMED = 8;

/**
 * Who allowed the agent what, across people: each person's active grant (services and scopes, permission sets,
 * until when), with revoke one and, for an incident, revoke them all.
 */
export function AgentGrants({ agentId, agentName }: { readonly agentId: string; readonly agentName: string }) {
  const grants = useAgentGrants(agentId);
  const [notice, setNotice] = useState<string | null>(null);
  const [askingAll, setAskingAll] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const revokeAll = useRevokeAllGrants(agentId, {
    onMutate: () => setFailure(null),
    onSuccess: ({ revoked }) => {
      setAskingAll(false);
      setNotice(
        `Revoked ${plural(revoked, "person's", "people's")} access to ${agentName}: their tokens are refused from now on.`,
      );
    },
    onError: (error) => setFailure(error as ApiFailure),
  });
  const items = grants.data ?? [];
  // Named in the confirmation in alphabetical order, each person once.
  const people = [...new Set(items.map((grant) => grant.principal))].sort();
  const named = people.slice(0, NAMED);
  return (
    <section className="panel agent-section" aria-labelledby="grants-heading">
      <div className="section-header">
        <h2 id="grants-heading">People&apos;s grants</h2>
        {items.length > 0 ? (
          <WriteButton
            className="button danger"
            onClick={() => {
              setFailure(null);
              setAskingAll(true);
            }}
          >
            Revoke all
          </WriteButton>
        ) : null}
      </div>
      <p className="muted">Who allowed {agentName} to act for them, what it may reach, and until when.</p>
      {notice !== null ? (
        <p className="notice success" role="status">
          {notice}
        </p>
      ) : null}
      {grants.isPending ? <Loading label="Loading grants…" /> : null}
      {grants.isError ? <ErrorView error={grants.error} /> : null}
      {grants.data !== undefined && items.length === 0 ? <p>Nobody has allowed this agent yet.</p> : null}
      {items.length > 0 ? (
        <ul className="list grant-list" aria-label={`People who allowed ${agentName}`}>
          {items.map((grant) => (
            <GrantItem key={grant.id} grant={grant} agentName={agentName} onRevoked={setNotice} />
          ))}
        </ul>
      ) : null}
      <ConfirmDialog
        open={askingAll}
        title={`Revoke every grant of ${agentName}?`}
        confirmLabel={`Revoke ${plural(items.length, 'grant', 'grants')}`}
        destructive
        busy={revokeAll.isPending}
        failure={failure}
        onConfirm={() => revokeAll.mutate()}
        onCancel={() => setAskingAll(false)}
      >
        <p>
          <strong>
            {plural(people.length, "person's", "people's")} access to {agentName} ends at once.
          </strong>{' '}
          Its tokens for them are refused from now on, its refresh tokens end, and it can act for them again only after
          each one allows it anew.
        </p>
        <p>
          Whose access stops: {listInWords(named)}
          {people.length > named.length ? ` and ${plural(people.length - named.length, 'other', 'others')}` : ''}.
        </p>
        <p className="muted">
          To stop the agent entirely while you investigate, and keep the option to restore it, suspend it instead.
        </p>
      </ConfirmDialog>
    </section>
  );
}

function GrantItem(props: {
  readonly grant: AdminGrant;
  readonly agentName: string;
  readonly onRevoked: (notice: string) => void;
}) {
  const { grant, agentName, onRevoked } = props;
  const [asking, setAsking] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const revoke = useRevokeGrant(grant.agent_id, grant.id, {
    onMutate: () => setFailure(null),
    onSuccess: () => {
      setAsking(false);
      onRevoked(`Revoked ${grant.principal}'s access to ${agentName}: its tokens for them are refused from now on.`);
    },
    onError: (error) => setFailure(error as ApiFailure),
  });
  // What the grant reaches: third-party services and MCP servers (the broker's protected resources), each with its scopes.
  const reached = [
    ...grant.services.map((service) => ({
      key: `service:${service.service_id}`,
      kind: 'service' as const,
      name: service.service_display_name,
      scopes: service.scopes,
    })),
    ...grant.resources.map((resource) => ({
      key: `mcp:${resource.resource_id}`,
      kind: 'mcp' as const,
      name: resource.resource_display_name,
      scopes: resource.scopes,
    })),
  ];
  const services = reached.map((item) => item.name);
  return (
    <li className="card grant">
      <div className="card-body">
        <div className="card-title">
          <span>{grant.principal}</span>
        </div>
        <div className="meta">
          <span>Allowed {formatDate(grant.created_at)}</span>
          <span>{grant.expires_at === null ? 'No end date' : `Until ${formatDate(grant.expires_at)}`}</span>
        </div>
        {reached.length > 0 ? (
          <ul className="grant-services" aria-label={`What ${grant.principal} allowed`}>
            {reached.map((item) => (
              <li key={item.key}>
                <span className="grant-service">{item.name}</span>
                {item.kind === 'mcp' ? <span className="muted"> (MCP server)</span> : null}{' '}
                {item.scopes.length > 0 ? (
                  <span className="scopes">
                    {item.scopes.map((scope) => (
                      <span key={scope} className="scope mono">
                        {scope}
                      </span>
                    ))}
                  </span>
                ) : (
                  <span className="muted">no scopes</span>
                )}
              </li>
            ))}
          </ul>
        ) : null}
        {grant.permission_sets.length > 0 ? (
          <p className="muted grant-sets">
            Permission sets: {listInWords(grant.permission_sets.map((set) => set.name))}
          </p>
        ) : null}
      </div>
      <WriteButton
        className="button danger"
        aria-label={`Revoke ${grant.principal}'s access`}
        onClick={() => {
          setFailure(null);
          setAsking(true);
        }}
      >
        Revoke
      </WriteButton>
      <ConfirmDialog
        open={asking}
        title={`Revoke ${grant.principal}'s access to ${agentName}?`}
        confirmLabel="Revoke access"
        destructive
        busy={revoke.isPending}
        failure={failure}
        onConfirm={() => revoke.mutate()}
        onCancel={() => setAsking(false)}
      >
        <p>
          <strong>
            {agentName} can no longer act for {grant.principal}
            {services.length > 0 ? ` on ${listInWords(services)}` : ''}.
          </strong>{' '}
          Its tokens for them are refused at once and its refresh tokens end.
        </p>
        <p>{grant.principal} can allow it again later, on their consent page.</p>
      </ConfirmDialog>
    </li>
  );
}
