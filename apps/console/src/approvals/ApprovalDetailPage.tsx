import { Fragment, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { useApproval } from '../api/queries';
import { DecisionForm, type Decision } from './DecisionForm';
import { patternErrorWords } from './patterns';
import { directRequest, requestContext, toolTitle, type DirectRequest } from './request-context';
import { ArgumentsView, PatternView, RiskBadge, agentName, persistenceWords, type Approval } from './values';
import { ErrorView } from '../errors/ErrorView';
import { usePageTitle } from '../components/page-title';
import { formatDate } from '../format';
import { PageRead } from '../components/PageRead';

/** `/approvals/:id`: one tool call, approved once / for the session / permanently (optionally widened by patterns) or denied. */
export function ApprovalDetailPage() {
  usePageTitle('Approval');
  const { id = '' } = useParams();
  const approval = useApproval(id);
  const [decision, setDecision] = useState<Decision | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  return (
    <>
      <p className="back-link">
        <Link to="/approvals">← Pending approvals</Link>
      </p>
      <PageRead query={approval} loading="Loading the request…" failed={(error) => <ApprovalProblem error={error} />}>
        {(data) => (
          <ApprovalView
            approval={data.data}
            decision={decision}
            failure={failure}
            onDecided={setDecision}
            onFailed={setFailure}
          />
        )}
      </PageRead>
    </>
  );
}

/** 404 and 410 in the words of this page; anything else through the one error view. */
function ApprovalProblem({ error }: { error: unknown }) {
  if (error instanceof ApiFailure && error.status === 404)
    return (
      <section className="panel error-view" role="alert">
        <h1>Approval not found</h1>
        <p>There is no approval at this address for you. It may belong to someone else, or the link is wrong.</p>
        <Link to="/approvals">See your pending approvals</Link>
      </section>
    );
  if (error instanceof ApiFailure && error.status === 410)
    return (
      <section className="panel error-view" role="alert">
        <h1>This request has expired</h1>
        <p>It waited too long for a decision and can no longer be approved or denied. The agent can ask again.</p>
        <Link to="/approvals">See your pending approvals</Link>
      </section>
    );
  return <ErrorView error={error} />;
}

interface ViewProps {
  readonly approval: Approval;
  readonly decision: Decision | null;
  readonly failure: unknown;
  readonly onDecided: (decision: Decision) => void;
  readonly onFailed: (error: unknown) => void;
}

function ApprovalView({ approval, decision, failure, onDecided, onFailed }: ViewProps) {
  const direct = directRequest(approval);
  // An agent's standard request describes its tool itself; a gateway's describes it in its metadata.
  const gateway = requestContext(approval.metadata);
  const context =
    direct === null ? gateway : { ...gateway, reason: null, title: direct.title, description: direct.description };
  const title = toolTitle(approval);
  return (
    <>
      <div className="page-header">
        <div>
          <h1 className="approval-title">
            <span className={context.title === null ? 'mono' : undefined}>{title}</span>{' '}
            <RiskBadge level={approval.risk_level} />
          </h1>
          {context.title !== null ? (
            <p className="tool-name">
              Tool <code>{approval.tool_name}</code>
            </p>
          ) : null}
          <p>
            {agentName(approval)} wants to run this tool
            {approval.status === 'pending' ? ' and is waiting for your decision.' : '.'}
          </p>
        </div>
        <StatusBadge approval={approval} />
      </div>
      {decision !== null ? <DecisionNotice decision={decision} direct={direct !== null} /> : null}
      {failure !== null ? <DecisionFailure error={failure} /> : null}
      {direct?.bindingMessage != null && approval.status === 'pending' ? (
        <BindingMessage words={direct.bindingMessage} />
      ) : null}
      {context.reason !== null || context.description !== null ? (
        <section className="panel request-why" aria-labelledby="why-heading">
          <h2 id="why-heading">
            {context.reason !== null ? `Why ${agentName(approval)} asks` : 'What this tool does'}
          </h2>
          {context.reason !== null ? (
            <>
              <p className="sr-only">In the agent's words:</p>
              <blockquote>{context.reason}</blockquote>
            </>
          ) : null}
          {context.description !== null ? (
            <>
              {context.reason !== null ? <h3>What this tool does</h3> : null}
              <p>{context.description}</p>
            </>
          ) : null}
        </section>
      ) : null}
      <section className="panel" aria-labelledby="request-heading">
        <h2 id="request-heading">The request</h2>
        <dl className="facts">
          <div>
            <dt>Agent</dt>
            <dd>{agentName(approval)}</dd>
          </div>
          {direct !== null ? <McpServerFact direct={direct} /> : null}
          {direct?.bindingMessage != null && approval.status !== 'pending' ? (
            <div>
              <dt>Words to check</dt>
              <dd>{direct.bindingMessage}</dd>
            </div>
          ) : null}
          <div>
            <dt>Asked</dt>
            <dd>{formatDate(approval.created_at)}</dd>
          </div>
          {approval.status === 'pending' && approval.expires_at !== null ? (
            <div>
              <dt>Expires</dt>
              <dd>{formatDate(approval.expires_at)}</dd>
            </div>
          ) : null}
          {approval.agent_session_id !== null ? (
            <div>
              <dt>Agent session</dt>
              <dd className="mono">{approval.agent_session_id}</dd>
            </div>
          ) : null}
        </dl>
        <ArgumentsView args={approval.arguments} open />
        {Object.keys(context.rest).length > 0 ? (
          <ArgumentsView args={context.rest} label="More context from the gateway" />
        ) : null}
      </section>
      {approval.status === 'pending' && decision === null ? (
        <DecisionForm approval={approval} onDecided={onDecided} onFailed={onFailed} />
      ) : (
        <DecidedView approval={approval} />
      )}
    </>
  );
}

/**
 * OpenID CIBA's `binding_message`: the agent shows the same words where the person started the task, so they can tell
 * this request is the one they expect before deciding.
 */
function BindingMessage({ words }: { words: string }) {
  return (
    <section className="panel binding-message" aria-labelledby="binding-heading">
      <h2 id="binding-heading">Check that your agent shows the same words</h2>
      <p className="binding-words">{words}</p>
      <p className="muted">If your agent shows other words, or you did not ask it for this, deny the request.</p>
    </section>
  );
}

/** The MCP server the call goes to: its registered name first, its address as secondary text. */
function McpServerFact({ direct }: { direct: DirectRequest }) {
  if (direct.serverUri === null) return null;
  return (
    <div>
      <dt>MCP server</dt>
      <dd>
        {direct.serverName ?? 'An MCP server no longer registered'}
        <span className="fact-secondary mono">
          <BreakableAddress address={direct.serverUri} />
        </span>
      </dd>
    </div>
  );
}

/**
 * An address that wraps after its `/` and `.` rather than inside a word (`…/mcp`, not `…/m` `cp`),
 * by a `<wbr>` after each.
 */
function BreakableAddress({ address }: { address: string }) {
  const parts = address.split(/(?<=[/.])/);
  return (
    <>
      {parts.map((part, index) => (
        <Fragment key={index}>
          {part}
          {index < parts.length - 1 && <wbr />}
        </Fragment>
      ))}
    </>
  );
}

function StatusBadge({ approval }: { approval: Approval }) {
  switch (approval.status) {
    case 'pending':
      return <span className="badge warning">Waiting for you</span>;
    case 'approved':
      return <span className="badge success">Approved</span>;
    case 'denied':
      return <span className="badge danger">Denied</span>;
    case 'revoked':
      return <span className="badge">Revoked</span>;
  }
}

/** What the decision does, in words; "always" is until revoked, so it names no time that could read as an end. */
function DecisionNotice({ decision, direct }: { decision: Decision; direct: boolean }) {
  // An agent's standard request learns the decision when it next asks the broker, within seconds.
  const sees = direct
    ? 'The agent receives the decision when it next checks.'
    : "The agent's gateway sees the decision now.";
  const text =
    decision.kind === 'approved'
      ? decision.persistence === 'permanent'
        ? 'Approved always: calls like this run without asking you, until you revoke it under Remembered decisions.'
        : `Approved for ${persistenceWords(decision.persistence)}. ${sees}`
      : decision.persistence === 'permanent'
        ? 'Denied always: this call is refused now and every time the agent asks again, until you revoke it under Remembered decisions.'
        : `Denied. ${sees}`;
  return (
    <div className={`notice ${decision.kind === 'approved' ? 'success' : 'warning'}`} role="status">
      {text} <Link to="/approvals">Back to pending approvals</Link>
      {decision.persistence === 'permanent' ? (
        <>
          {' · '}
          <Link to="/approvals/remembered">Remembered decisions</Link>
        </>
      ) : null}
    </div>
  );
}

/** A decided approval: what was decided, when, and what it covers. */
function DecidedView({ approval }: { approval: Approval }) {
  const at = approval.revoked_at ?? approval.denied_at ?? approval.approved_at;
  return (
    <section className="panel" aria-labelledby="decision-heading">
      <h2 id="decision-heading">Decision</h2>
      <dl className="facts">
        <div>
          <dt>Status</dt>
          <dd>{approval.status}</dd>
        </div>
        <div>
          <dt>Covers</dt>
          <dd>{persistenceWords(approval.persistence)}</dd>
        </div>
        {at !== null ? (
          <div>
            <dt>Decided</dt>
            <dd>{formatDate(at)}</dd>
          </div>
        ) : null}
        {approval.consumed_at !== null ? (
          <div>
            <dt>Used</dt>
            <dd>{formatDate(approval.consumed_at)}</dd>
          </div>
        ) : null}
      </dl>
      {approval.status === 'approved' && approval.persistence !== 'once' ? (
        <>
          <h3>Arguments it allows</h3>
          <PatternView pattern={approval.params_pattern} args={approval.arguments} />
        </>
      ) : null}
    </section>
  );
}

/** A failed decision in words: 409 already decided, 410 expired, 422 a pattern that does not fit. */
function DecisionFailure({ error }: { error: unknown }) {
  if (error instanceof ApiFailure) {
    const text =
      error.status === 409
        ? 'This request is no longer pending: it was decided elsewhere (another tab or person). The page now shows its state.'
        : error.status === 410
          ? 'This request has expired and can no longer be decided. The agent can ask again.'
          : error.status === 422
            ? patternErrorWords(error.message).join(' ')
            : error.status === 400
              ? `The broker refused this decision: ${error.message}`
              : undefined;
    if (text !== undefined)
      return (
        <div className="notice danger" role="alert">
          {text}
        </div>
      );
  }
  return <ErrorView error={error} />;
}
