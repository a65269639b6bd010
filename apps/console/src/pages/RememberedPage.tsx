import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { ArgumentsView, PatternView, RiskBadge, agentName, type Approval } from '../approvals/values';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorView, Loading } from '../components/ErrorView';
import { usePageTitle } from '../components/page-title';
import { formatDate } from '../format';

/** `/approvals/remembered`: the person's standing permanent approvals and denials, with revoke. */
export function RememberedPage() {
  usePageTitle('Remembered approvals');
  const remembered = useQuery({ queryKey: ['approvals', 'permanent'], queryFn: () => unwrap(api.GET('/api/approvals/permanent')) });
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Remembered decisions</h1>
          <p>Tool calls you allowed or refused for good. Revoke one and the agent has to ask you again.</p>
        </div>
        <Link className="button" to="/approvals">
          Pending approvals
        </Link>
      </div>
      {notice !== null ? (
        <div className="notice success" role="status">
          {notice}
        </div>
      ) : null}
      {remembered.isPending ? (
        <Loading label="Loading remembered decisions…" />
      ) : remembered.isError ? (
        <ErrorView error={remembered.error} />
      ) : (
        <RememberedList items={remembered.data.data} onRevoked={setNotice} />
      )}
    </>
  );
}

function RememberedList({ items, onRevoked }: { items: readonly Approval[]; onRevoked: (text: string) => void }) {
  if (items.length === 0)
    return (
      <div className="panel empty">
        <p>You have no remembered decisions.</p>
        <p>When you approve or deny a tool call “always”, it is listed here.</p>
      </div>
    );
  return (
    <ul className="list" aria-label="Remembered decisions">
      {items.map((item) => (
        <li key={item.id} className="card approval-card">
          <div className="card-body">
            <div className="approval-heading">
              <span className="card-title mono">{item.tool_name}</span>
              {item.status === 'approved' ? <span className="badge success">Always allowed</span> : <span className="badge danger">Always denied</span>}
              <RiskBadge level={item.risk_level} />
            </div>
            <div className="meta">
              <span>Agent: {agentName(item)}</span>
              <span>Decided {formatDate(item.status === 'approved' ? item.approved_at : item.denied_at)}</span>
            </div>
            {item.status === 'approved' ? (
              <div className="remembered-scope">
                <h2 className="subhead">Arguments it allows</h2>
                <PatternView pattern={item.params_pattern} />
              </div>
            ) : null}
            <ArgumentsView args={item.arguments} label="Reviewed arguments" />
          </div>
          <div className="actions">
            <RevokeDecision approval={item} onRevoked={onRevoked} />
          </div>
        </li>
      ))}
    </ul>
  );
}

/** Revoke after a confirmation that says what changes. */
function RevokeDecision({ approval, onRevoked }: { approval: Approval; onRevoked: (text: string) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const queries = useQueryClient();
  const allowed = approval.status === 'approved';
  const revoke = useMutation({
    mutationFn: () => unwrap(api.POST('/api/approvals/{id}/revoke', { params: { path: { id: approval.id } } })),
    onMutate: () => setFailure(null),
    onSuccess: async ({ data }) => {
      dialog.current?.close();
      onRevoked(`Revoked the remembered ${allowed ? 'approval' : 'denial'} of ${approval.tool_name} for ${agentName(approval)} at ${formatDate(data.revoked_at)}.`);
      await queries.invalidateQueries({ queryKey: ['approvals'] });
    },
    onError: setFailure,
  });
  const heading = `revoke-${approval.id}`;
  return (
    <>
      <button type="button" className="button danger" aria-label={`Revoke ${approval.tool_name} for ${agentName(approval)}`} onClick={() => dialog.current?.showModal()}>
        Revoke
      </button>
      <ConfirmDialog dialogRef={dialog} id={heading} title={`Revoke this remembered ${allowed ? 'approval' : 'denial'}?`} confirmLabel="Revoke" busy={revoke.isPending} failure={failure} onConfirm={() => revoke.mutate()}>
        <p>
          {allowed
            ? `${agentName(approval)} will no longer be able to run ${approval.tool_name} without asking: the next call waits for your decision.`
            : `${agentName(approval)} will be able to ask you again to run ${approval.tool_name}.`}
        </p>
      </ConfirmDialog>
    </>
  );
}
