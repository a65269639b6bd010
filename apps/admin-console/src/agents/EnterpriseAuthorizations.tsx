import { useState } from 'react';
import type { ApiFailure } from '../api/client';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { WriteButton } from '../components/ReadOnly';
import { ErrorView, Loading } from '../errors/ErrorView';
import { formatDate } from './format';
import { useEnterpriseAuthorizations, useRevokeEnterpriseAuthorization } from './queries';
import type { EnterpriseAuthorization } from './types';

/** The host of a URL for a short mention, or the URL itself when it does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * What people's organisations allowed the agent through their identity providers (Identity Assertion JWT
 * Authorization Grants, docs/oauth2.md "Enterprise-managed authorization"), live ones only, each with revoke.
 */
export function EnterpriseAuthorizations(props: { readonly agentId: string; readonly agentName: string }) {
  const { agentId, agentName } = props;
  const authorizations = useEnterpriseAuthorizations(agentId);
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <section className="panel agent-section" aria-labelledby="enterprise-heading">
      <h2 id="enterprise-heading">Allowed by organisations</h2>
      <p className="muted">
        Enterprise authorizations: people&apos;s identity providers let {agentName} use MCP servers as them, without
        asking them. Each is listed while its current token lasts.
      </p>
      {notice !== null ? (
        <p className="notice success" role="status">
          {notice}
        </p>
      ) : null}
      {authorizations.isPending ? <Loading label="Loading enterprise authorizations…" /> : null}
      {authorizations.isError ? <ErrorView error={authorizations.error} /> : null}
      {authorizations.data?.length === 0 ? <p>No identity provider has allowed this agent at the moment.</p> : null}
      {authorizations.data !== undefined && authorizations.data.length > 0 ? (
        <ul className="list" aria-label={`Enterprise authorizations of ${agentName}`}>
          {authorizations.data.map((item) => (
            <AuthorizationItem
              key={item.id}
              item={item}
              agentId={agentId}
              agentName={agentName}
              onRevoked={setNotice}
            />
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function AuthorizationItem(props: {
  readonly item: EnterpriseAuthorization;
  readonly agentId: string;
  readonly agentName: string;
  readonly onRevoked: (notice: string) => void;
}) {
  const { item, agentId, agentName, onRevoked } = props;
  const [asking, setAsking] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const server = item.resource_display_name ?? item.resource_uri;
  const revoke = useRevokeEnterpriseAuthorization(agentId, item.id, {
    onMutate: () => setFailure(null),
    onSuccess: () => {
      setAsking(false);
      onRevoked(`Revoked what ${hostOf(item.issuer)} allowed ${agentName} on ${server} for ${item.principal}.`);
    },
    onError: (error) => setFailure(error as ApiFailure),
  });
  return (
    <li className="card">
      <div className="card-body">
        <div className="card-title">
          <span>{item.principal}</span>
        </div>
        <div className="meta">
          <span>
            MCP server: {server} <span className="mono">{item.resource_uri}</span>
          </span>
          <span>
            Identity provider: <span className="mono">{hostOf(item.issuer)}</span>
          </span>
          <span>Current token ends {formatDate(item.expires_at)}</span>
        </div>
        {item.scopes.length > 0 ? (
          <p className="scopes">
            {item.scopes.map((scope) => (
              <span key={scope} className="scope mono">
                {scope}
              </span>
            ))}
          </p>
        ) : null}
      </div>
      <WriteButton
        className="button danger"
        aria-label={`Revoke ${item.principal}'s enterprise authorization for ${server}`}
        onClick={() => {
          setFailure(null);
          setAsking(true);
        }}
      >
        Revoke
      </WriteButton>
      <ConfirmDialog
        open={asking}
        title={`Revoke what ${hostOf(item.issuer)} allowed ${agentName}?`}
        confirmLabel="Revoke"
        destructive
        busy={revoke.isPending}
        failure={failure}
        onConfirm={() => revoke.mutate()}
        onCancel={() => setAsking(false)}
      >
        <p>
          <strong>
            {agentName}&apos;s tokens for {item.principal} on {server} stop working at once.
          </strong>
        </p>
        <p>
          The identity provider can allow it again with a new assertion: to stop that, change its policy, or suspend
          this agent.
        </p>
      </ConfirmDialog>
    </li>
  );
}
