import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiFailure, api, unwrap } from '../api/client';
import type { components } from '../api/user-api';
import { choicesFor, initialRows, patternErrorWords, rowGlob, toPattern, type PatternRow } from '../approvals/patterns';
import { requestContext, toolTitle } from '../approvals/request-context';
import { useDebounced } from '../approvals/useDebounced';
import {
  ArgumentsView,
  GlobWords,
  OtherArgumentsRow,
  PatternView,
  RiskBadge,
  StructuredValue,
  agentName,
  persistenceWords,
  type Approval,
} from '../approvals/values';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorView, Loading } from '../components/ErrorView';
import { usePageTitle } from '../components/page-title';
import { ReconnectBanner } from '../components/ReconnectBanner';
import { formatDate } from '../format';

type Persistence = components['schemas']['ApproveApprovalDto']['persistence'];
type Decision =
  | { kind: 'approved'; persistence: Persistence; at: string }
  | { kind: 'denied'; persistence: 'once' | 'permanent'; at: string };

/** How long the pattern must rest before the scope preview is asked for. */
const PREVIEW_DELAY_MS = 350;

/** `/approvals/:id`: one tool call, approved once / for the session / permanently (optionally widened by patterns) or denied. */
export function ApprovalDetailPage() {
  usePageTitle('Approval');
  const { id = '' } = useParams();
  const approval = useQuery({
    queryKey: ['approvals', 'one', id],
    queryFn: () => unwrap(api.GET('/api/approvals/{id}', { params: { path: { id } } })),
  });
  const [decision, setDecision] = useState<Decision | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  return (
    <>
      <p className="back-link">
        <Link to="/approvals">← Pending approvals</Link>
      </p>
      {approval.data === undefined ? (
        approval.isError ? (
          <ApprovalProblem error={approval.error} />
        ) : (
          <Loading label="Loading the request…" />
        )
      ) : (
        <>
          <ReconnectBanner query={approval} />
          <ApprovalView
            approval={approval.data.data}
            decision={decision}
            failure={failure}
            onDecided={setDecision}
            onFailed={setFailure}
          />
        </>
      )}
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
  const context = requestContext(approval.metadata);
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
      {decision !== null ? <DecisionNotice decision={decision} /> : null}
      {failure !== null ? <DecisionFailure error={failure} /> : null}
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
function DecisionNotice({ decision }: { decision: Decision }) {
  const text =
    decision.kind === 'approved'
      ? decision.persistence === 'permanent'
        ? 'Approved always: calls like this run without asking you, until you revoke it under Remembered decisions.'
        : `Approved for ${persistenceWords(decision.persistence)}. The agent's gateway sees the decision now.`
      : decision.persistence === 'permanent'
        ? 'Denied always: this call is refused now and every time the agent asks again, until you revoke it under Remembered decisions.'
        : "Denied. The agent's gateway sees the decision now.";
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

const PERSISTENCE: ReadonlyArray<{ value: Persistence; label: string; hint: string }> = [
  { value: 'once', label: 'Only this call', hint: 'The agent may run this call once, with exactly these arguments.' },
  {
    value: 'session',
    label: 'This agent session',
    hint: 'Calls like this one are allowed for the rest of the agent session.',
  },
  {
    value: 'permanent',
    label: 'Always',
    hint: 'Calls like this one are allowed from now on, until you revoke it under Remembered.',
  },
];

function DecisionForm({ approval, onDecided, onFailed }: Pick<ViewProps, 'approval' | 'onDecided' | 'onFailed'>) {
  const queries = useQueryClient();
  const formId = useId();
  const confirm = useRef<HTMLDialogElement>(null);
  const [persistence, setPersistence] = useState<Persistence>('once');
  const [rows, setRows] = useState<PatternRow[]>(() => initialRows(approval.arguments));
  const [denyAlways, setDenyAlways] = useState(false);
  const [confirmFailure, setConfirmFailure] = useState<unknown>(null);
  const hasSession = approval.agent_session_id !== null;
  const hasArguments = rows.length > 0;
  // README "Tool approvals": "always" for a critical tool is confirmed a second time, in a dialog.
  const confirmAlways = persistence === 'permanent' && approval.risk_level === 'critical';

  const pattern = persistence !== 'once' ? toPattern(rows) : null;
  // The preview's key: null for `once` (nothing to preview), else the pattern's JSON text.
  const previewKey = persistence === 'once' ? null : JSON.stringify(pattern);
  const settledKey = useDebounced(previewKey, PREVIEW_DELAY_MS);
  const preview = useQuery({
    queryKey: ['scope-preview', approval.id, settledKey],
    queryFn: () =>
      unwrap(
        api.POST('/api/approvals/{id}/scope-preview', {
          params: { path: { id: approval.id } },
          body: { params_pattern: JSON.parse(settledKey ?? 'null') as Record<string, string> | null },
        }),
      ),
    enabled: settledKey !== null,
    retry: false,
    staleTime: Infinity,
  });
  const previewCurrent =
    persistence === 'once' || (settledKey === previewKey && preview.isSuccess && !preview.isFetching);

  const settle = async () => {
    await queries.invalidateQueries({ queryKey: ['approvals'] });
  };
  const approve = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/approvals/{id}/approve', {
          params: { path: { id: approval.id } },
          body: persistence === 'once' || pattern === null ? { persistence } : { persistence, params_pattern: pattern },
        }),
      ),
    onMutate: () => {
      onFailed(null);
      setConfirmFailure(null);
    },
    onSuccess: async ({ data }) => {
      confirm.current?.close();
      onDecided({ kind: 'approved', persistence: data.persistence, at: data.approved_at });
      await settle();
    },
    onError: async (error) => {
      // From the confirmation dialog, the failure is shown there and the dialog stays open for another try.
      if (
        confirm.current?.open === true &&
        !(error instanceof ApiFailure && (error.status === 409 || error.status === 410))
      )
        setConfirmFailure(error);
      else {
        confirm.current?.close();
        onFailed(error);
      }
      if (error instanceof ApiFailure && (error.status === 409 || error.status === 410)) await settle();
    },
  });
  const deny = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/approvals/{id}/deny', {
          params: { path: { id: approval.id } },
          body: denyAlways ? { persistence: 'permanent' } : {},
        }),
      ),
    onMutate: () => onFailed(null),
    onSuccess: async ({ data }) => {
      onDecided({ kind: 'denied', persistence: data.persistence, at: data.denied_at });
      await settle();
    },
    onError: async (error) => {
      onFailed(error);
      if (error instanceof ApiFailure && (error.status === 409 || error.status === 410)) await settle();
    },
  });
  const busy = approve.isPending || deny.isPending;
  const title = toolTitle(approval);

  const setRow = (index: number, change: Partial<PatternRow>) =>
    setRows((current) => current.map((row, at) => (at === index ? { ...row, ...change } : row)));

  return (
    <>
      <section className="panel" aria-labelledby={`${formId}-approve`}>
        <h2 id={`${formId}-approve`}>Approve</h2>
        <fieldset>
          <legend>Allow for</legend>
          {PERSISTENCE.map((option) => {
            const disabled = option.value === 'session' && !hasSession;
            return (
              <label key={option.value} className={`choice${disabled ? ' disabled' : ''}`}>
                <input
                  type="radio"
                  name={`${formId}-persistence`}
                  value={option.value}
                  checked={persistence === option.value}
                  disabled={disabled || busy}
                  onChange={() => setPersistence(option.value)}
                />
                <span>
                  <span className="choice-label">{option.label}</span>
                  <span className="choice-hint">
                    {disabled ? 'Not available: the agent did not name a session for this call.' : option.hint}
                    {option.value === 'permanent' && approval.risk_level === 'critical'
                      ? ' This tool is critical: you will be asked to confirm.'
                      : ''}
                  </span>
                </span>
              </label>
            );
          })}
        </fieldset>
        {persistence !== 'once' ? (
          <>
            {hasArguments ? (
              <fieldset>
                <legend>Which calls</legend>
                <p className="choice-hint">For each argument: only the value you reviewed, or more.</p>
                <PatternRows rows={rows} idPrefix={formId} disabled={busy} onChange={setRow} />
              </fieldset>
            ) : null}
            <ScopePreview
              title={title}
              rows={rows}
              pattern={pattern}
              waiting={!previewCurrent}
              error={settledKey === previewKey ? preview.error : null}
            />
          </>
        ) : null}
        <div className="actions">
          <button
            type="button"
            className="button primary"
            disabled={busy || !previewCurrent}
            onClick={() => (confirmAlways ? confirm.current?.showModal() : approve.mutate())}
          >
            {persistence === 'once'
              ? 'Approve this call'
              : persistence === 'session'
                ? 'Approve for this session'
                : confirmAlways
                  ? 'Approve always…'
                  : 'Approve always'}
          </button>
        </div>
        <ConfirmDialog
          dialogRef={confirm}
          id={`${formId}-confirm`}
          title="Always allow a critical tool?"
          confirmLabel="Yes, always allow"
          busy={approve.isPending}
          failure={confirmFailure}
          onConfirm={() => approve.mutate()}
          onClose={() => setConfirmFailure(null)}
        >
          <p>
            {agentName(approval)} will run {title}{' '}
            {pattern === null ? 'with exactly these arguments' : 'for every call these choices cover'} from now on,
            without asking you, until you revoke it under Remembered decisions.
          </p>
          <p>The gateway marked this tool critical: what it does may be hard to undo.</p>
        </ConfirmDialog>
      </section>
      <section className="panel" aria-labelledby={`${formId}-deny`}>
        <h2 id={`${formId}-deny`}>Deny</h2>
        <label className="choice">
          <input
            type="checkbox"
            checked={denyAlways}
            disabled={busy}
            onChange={(event) => setDenyAlways(event.target.checked)}
          />
          <span>
            <span className="choice-label">Always deny this call</span>
            <span className="choice-hint">
              Refuse it now and every time the agent asks again, until you revoke it under Remembered.
            </span>
          </span>
        </label>
        <div className="actions">
          <button type="button" className="button danger" disabled={busy} onClick={() => deny.mutate()}>
            {denyAlways ? 'Deny always' : 'Deny this call'}
          </button>
        </div>
      </section>
    </>
  );
}

/** One choice per argument ("Any file in /reports", "Any query"); a pattern of one's own is the advanced choice. */
function PatternRows({
  rows,
  idPrefix,
  disabled,
  onChange,
}: {
  rows: readonly PatternRow[];
  idPrefix: string;
  disabled: boolean;
  onChange: (index: number, change: Partial<PatternRow>) => void;
}) {
  return (
    <div className="pattern-rows">
      {rows.map((row, index) => {
        const select = `${idPrefix}-choice-${index}`;
        const input = `${idPrefix}-pattern-${index}`;
        return (
          <div key={index} className="pattern-row">
            <label htmlFor={select} className="mono pattern-name">
              {row.name}
            </label>
            <select
              id={select}
              value={row.choice}
              disabled={disabled}
              onChange={(event) => onChange(index, { choice: event.target.value as PatternRow['choice'] })}
            >
              {choicesFor(row.name, row.value).map((choice) => (
                <option key={choice.id} value={choice.id}>
                  {choice.label}
                </option>
              ))}
            </select>
            {row.choice === 'custom' ? (
              <div className="pattern-custom">
                <label htmlFor={input} className="sr-only">
                  Pattern for {row.name}
                </label>
                <input
                  id={input}
                  type="text"
                  className="mono"
                  value={row.custom}
                  disabled={disabled}
                  spellCheck={false}
                  autoComplete="off"
                  aria-describedby={`${input}-help`}
                  onChange={(event) => onChange(index, { custom: event.target.value })}
                />
                <p className="pattern-help" id={`${input}-help`}>
                  <code>*</code> any text except <code>/</code>, <code>**</code> any path, <code>?</code> one character,{' '}
                  <code>\</code> escapes.
                </p>
              </div>
            ) : null}
          </div>
        );
      })}
    </div>
  );
}

/** What the approval covers, in words from the person's own choices; the broker's preview checks them (a refusal in words). */
function ScopePreview({
  title,
  rows,
  pattern,
  waiting,
  error,
}: {
  title: string;
  rows: readonly PatternRow[];
  pattern: Record<string, string> | null;
  waiting: boolean;
  error: unknown;
}) {
  const invalid = error !== null && error !== undefined;
  let body;
  if (invalid)
    body = (
      <>
        {(error instanceof ApiFailure
          ? patternErrorWords(error.message)
          : ['The broker could not check these choices.']
        ).map((text, index) => (
          <p key={index} className="preview-error">
            {text}
          </p>
        ))}
        <p className="muted">Change the choices to approve.</p>
      </>
    );
  else if (pattern === null)
    body = <p className="preview-text">{title}, only with exactly the arguments you reviewed.</p>;
  else
    body = (
      <>
        <p className="preview-text">{title}, when:</p>
        <dl className="arg-list">
          {rows.map((row, index) => {
            const glob = rowGlob(row);
            return (
              <div key={index} className="arg-row">
                <dt className="mono">{row.name}</dt>
                <dd>
                  {glob === null ? (
                    <span>any value</span>
                  ) : row.choice === 'exact' ? (
                    <>
                      <span className="muted">exactly </span>
                      <StructuredValue value={row.value} />
                    </>
                  ) : (
                    <GlobWords glob={glob} reviewed={row.value} />
                  )}
                </dd>
              </div>
            );
          })}
          <OtherArgumentsRow />
        </dl>
        {waiting ? <p className="muted">Checking…</p> : null}
      </>
    );
  return (
    <div className={`scope-preview${invalid ? ' invalid' : ''}`} role="status" aria-live="polite">
      <h3>What this approval covers</h3>
      {body}
    </div>
  );
}
