import { useState } from 'react';
import type { ApiFailure } from '../api/client';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { WriteButton } from '../components/ReadOnly';
import { ErrorView, Loading } from '../errors/ErrorView';
import { formatDate } from './format';
import { useCredentials, useIssueCredentials, useRevokeCredentials } from './queries';
import type { IssuedCredentials } from './types';

type Asking = 'rotate' | 'revoke' | null;

/**
 * The agent's client credentials (RFC 6749 §2.3.1, for its `client_credentials` and confidential code requests):
 * when they were made and last rotated, never the secret. A new secret is shown once, right after it is made, with
 * Copy; it lives in this component only (never in the query cache) and is gone once the administrator says so or
 * leaves the page.
 */
export function ClientCredentials({ agentId, agentName }: { readonly agentId: string; readonly agentName: string }) {
  const credentials = useCredentials(agentId);
  const [issued, setIssued] = useState<IssuedCredentials | null>(null);
  const [asking, setAsking] = useState<Asking>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const onError = (error: unknown) => setFailure(error as ApiFailure);
  const issue = useIssueCredentials(agentId, {
    onMutate: () => {
      setFailure(null);
      setNotice(null);
    },
    onSuccess: (answer) => {
      setAsking(null);
      setIssued(answer);
    },
    onError,
  });
  const revoke = useRevokeCredentials(agentId, {
    onMutate: () => {
      setFailure(null);
      setNotice(null);
    },
    onSuccess: () => {
      setAsking(null);
      setIssued(null);
      setNotice(`${agentName}'s client secret is revoked: it no longer authenticates.`);
    },
    onError,
  });
  const ask = (what: Asking) => {
    setFailure(null);
    setAsking(what);
  };
  return (
    <section className="panel agent-section" aria-labelledby="credentials-heading">
      <h2 id="credentials-heading">Client credentials</h2>
      <p className="muted">
        The client id and secret the agent authenticates with at the token endpoint. The broker keeps only a digest of
        the secret: it is shown once, when it is made.
      </p>
      {notice !== null ? (
        <p className="notice success" role="status">
          {notice}
        </p>
      ) : null}
      {issued !== null ? <NewSecret issued={issued} onDone={() => setIssued(null)} /> : null}
      {credentials.isPending ? <Loading label="Loading client credentials…" /> : null}
      {credentials.isError ? <ErrorView error={credentials.error} /> : null}
      {credentials.data === null ? (
        <>
          <p>This agent has no client credentials: it cannot authenticate with a secret.</p>
          {asking === null && failure !== null ? (
            <p className="notice danger" role="alert">
              {failure.message}
            </p>
          ) : null}
          <div className="actions start">
            <WriteButton className="button primary" disabled={issue.isPending} onClick={() => issue.mutate()}>
              {issue.isPending ? 'Creating…' : 'Create client credentials'}
            </WriteButton>
          </div>
        </>
      ) : null}
      {credentials.data !== undefined && credentials.data !== null ? (
        <>
          <dl className="facts">
            <div>
              <dt>Client id</dt>
              <dd>
                <span className="mono">{credentials.data.client_id}</span>{' '}
                <CopyButton value={credentials.data.client_id} label="Copy client id" />
              </dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{formatDate(credentials.data.created_at)}</dd>
            </div>
            <div>
              <dt>Secret last rotated</dt>
              <dd>{credentials.data.rotated_at === null ? 'Never' : formatDate(credentials.data.rotated_at)}</dd>
            </div>
          </dl>
          <div className="actions start">
            <WriteButton className="button" onClick={() => ask('rotate')}>
              Rotate secret
            </WriteButton>
            <WriteButton className="button danger" onClick={() => ask('revoke')}>
              Revoke credentials
            </WriteButton>
          </div>
        </>
      ) : null}
      <ConfirmDialog
        open={asking === 'rotate'}
        title={`Rotate ${agentName}'s client secret?`}
        confirmLabel="Rotate secret"
        destructive
        busy={issue.isPending}
        failure={failure}
        onConfirm={() => issue.mutate()}
        onCancel={() => setAsking(null)}
      >
        <p>
          <strong>The current secret stops working at once.</strong> Every token request signed with it is refused until
          the agent is given the new secret, which is shown once, next.
        </p>
        <p>Tokens already issued keep working until they expire.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'revoke'}
        title={`Revoke ${agentName}'s client credentials?`}
        confirmLabel="Revoke credentials"
        destructive
        busy={revoke.isPending}
        failure={failure}
        onConfirm={() => revoke.mutate()}
        onCancel={() => setAsking(null)}
      >
        <p>
          <strong>The secret stops working at once:</strong> the agent can no longer get tokens with it (client
          credentials, confidential code exchanges).
        </p>
        <p>This cannot be undone; you can create new credentials afterwards, with a new secret.</p>
      </ConfirmDialog>
    </section>
  );
}

/** The secret just made: shown this once, with Copy and what to do with it. */
function NewSecret({ issued, onDone }: { readonly issued: IssuedCredentials; readonly onDone: () => void }) {
  const rotated = issued.previous_invalidated_at !== undefined;
  return (
    <div className="notice warning new-secret" role="region" aria-label="New client secret">
      <p>
        <strong>Copy the secret now: it is shown only this once.</strong> Store it where the agent reads it (a secret
        manager). If it is lost, rotate it.
        {rotated ? ' The previous secret no longer works.' : null}
      </p>
      <dl className="facts">
        <div>
          <dt>Client id</dt>
          <dd>
            <span className="mono">{issued.client_id}</span>{' '}
            <CopyButton value={issued.client_id} label="Copy new client id" />
          </dd>
        </div>
        <div>
          <dt>Client secret</dt>
          <dd>
            <code className="secret">{issued.client_secret}</code>{' '}
            <CopyButton value={issued.client_secret} label="Copy client secret" />
          </dd>
        </div>
      </dl>
      <div className="actions start">
        <button type="button" className="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </div>
  );
}
