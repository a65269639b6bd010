import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { useRememberedApprovals, useRevokeApproval } from '../api/queries';
import { toolTitle } from './request-context';
import { ArgumentsView, PatternView, RiskBadge, agentName, type Approval } from './values';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { usePageTitle } from '../components/page-title';
import { RevokedNotice, useRevokedNotice } from '../components/RevokedNotice';
import { formatDate } from '../format';
import { PageRead } from '../components/PageRead';

/** `/approvals/remembered`: the person's standing permanent approvals and denials, with revoke. */
export function RememberedPage() {
  usePageTitle('Remembered decisions');
  const remembered = useRememberedApprovals();
  const { notice, setNotice, heading } = useRevokedNotice();
  return (
    <>
      <div className="page-header">
        <div>
          <h1 ref={heading} tabIndex={-1}>
            Remembered decisions
          </h1>
          <p>
            Tool calls you allowed or refused for good. Revoke one and the agent has to ask you again. Revoking an agent
            on the <Link to="/agents">Agents</Link> page ends all of its remembered decisions.
          </p>
        </div>
        <Link className="button" to="/approvals">
          Pending approvals
        </Link>
      </div>
      <RevokedNotice notice={notice} />
      <PageRead query={remembered} loading="Loading remembered decisions…">
        {(data) => <RememberedList items={data.data} onRevoked={setNotice} />}
      </PageRead>
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
              <span className={`card-title${toolTitle(item) === item.tool_name ? ' mono' : ''}`}>
                {toolTitle(item)}
              </span>
              {item.status === 'approved' ? (
                <span className="badge success">Always allowed</span>
              ) : (
                <span className="badge danger">Always denied</span>
              )}
              <RiskBadge level={item.risk_level} />
            </div>
            <div className="meta">
              <span>Agent: {agentName(item)}</span>
              <span>Decided {formatDate(item.status === 'approved' ? item.approved_at : item.denied_at)}</span>
            </div>
            {item.status === 'approved' ? (
              <div className="remembered-scope">
                <h2 className="subhead">Arguments it allows</h2>
                <PatternView pattern={item.params_pattern} args={item.arguments} />
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
  const allowed = approval.status === 'approved';
  const revoke = useRevokeApproval(approval.id, {
    onMutate: () => setFailure(null),
    onSuccess: () => {
      dialog.current?.close();
      onRevoked(
        allowed
          ? `Revoked: ${agentName(approval)} can no longer run ${toolTitle(approval)} without asking; its next call waits for your decision.`
          : `Revoked: ${agentName(approval)} can ask you again to run ${toolTitle(approval)}.`,
      );
    },
    onError: setFailure,
  });
  const heading = `revoke-${approval.id}`;
  return (
    <>
      <button
        type="button"
        className="button danger"
        aria-label={`Revoke ${toolTitle(approval)} for ${agentName(approval)}`}
        onClick={() => {
          setFailure(null);
          dialog.current?.showModal();
        }}
      >
        Revoke
      </button>
      <ConfirmDialog
        dialogRef={dialog}
        id={heading}
        title={`Revoke this remembered ${allowed ? 'approval' : 'denial'}?`}
        confirmLabel="Revoke"
        busy={revoke.isPending}
        failure={failure}
        onConfirm={() => revoke.mutate()}
      >
        <p>
          {allowed
            ? `${agentName(approval)} will no longer be able to run ${toolTitle(approval)} without asking: the next call waits for your decision.`
            : `${agentName(approval)} will be able to ask you again to run ${toolTitle(approval)}.`}
        </p>
      </ConfirmDialog>
    </>
  );
}
