import { Fragment, useId, useRef, useState } from 'react';
import { ApiFailure } from '../api/client';
import { useApprove, useDenyApproval, useScopePreview } from '../api/queries';
import type { components } from '../api/user-api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import {
  choicesFor,
  coverageWords,
  initialRows,
  patternErrorWords,
  rowGlob,
  toPattern,
  type PatternRow,
} from './patterns';
import { toolTitle } from './request-context';
import { useDebounced } from './useDebounced';
import { GlobWords, OtherArgumentsRow, StructuredValue, agentName, type Approval } from './values';

type Persistence = components['schemas']['ApproveApprovalDto']['persistence'];

/** What the person decided on this page, to say in words what it does. */
export type Decision =
  | { kind: 'approved'; persistence: Persistence; at: string }
  | { kind: 'denied'; persistence: 'once' | 'permanent'; at: string };

export interface DecisionFormProps {
  readonly approval: Approval;
  readonly onDecided: (decision: Decision) => void;
  /** A failed decision (null: a new attempt started), shown by the page above the request. */
  readonly onFailed: (error: unknown) => void;
}

/** How long the pattern must rest before the scope preview is asked for. */
const PREVIEW_DELAY_MS = 350;

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

/**
 * The decision on a pending approval: approve once, for the agent session or always (for the last two, which calls:
 * each argument only as reviewed, or widened, with the broker's preview of what that covers), or deny once or always.
 */
export function DecisionForm({ approval, onDecided, onFailed }: DecisionFormProps) {
  const formId = useId();
  const confirm = useRef<HTMLDialogElement>(null);
  const [persistence, setPersistence] = useState<Persistence>('once');
  const [rows, setRows] = useState<PatternRow[]>(() => initialRows(approval.arguments));
  const [denyAlways, setDenyAlways] = useState(false);
  const [confirmFailure, setConfirmFailure] = useState<unknown>(null);
  const hasSession = approval.agent_session_id !== null;
  // An agent's standard request (docs/ciba.md) belongs to no agent session: that choice is not offered at all.
  const choices =
    approval.requested_via === 'ciba' ? PERSISTENCE.filter((option) => option.value !== 'session') : PERSISTENCE;
  const hasArguments = rows.length > 0;
  // README "Tool approvals": "always" for a critical tool is confirmed a second time, in a dialog.
  const confirmAlways = persistence === 'permanent' && approval.risk_level === 'critical';

  const pattern = persistence !== 'once' ? toPattern(rows) : null;
  // The preview's key: null for `once` (nothing to preview), else the pattern's JSON text.
  const previewKey = persistence === 'once' ? null : JSON.stringify(pattern);
  const settledKey = useDebounced(previewKey, PREVIEW_DELAY_MS);
  const preview = useScopePreview(approval.id, settledKey);
  const previewCurrent =
    persistence === 'once' || (settledKey === previewKey && preview.isSuccess && !preview.isFetching);

  const approve = useApprove(approval.id, {
    onMutate: () => {
      onFailed(null);
      setConfirmFailure(null);
    },
    onSuccess: (data) => {
      confirm.current?.close();
      onDecided({ kind: 'approved', persistence: data.persistence, at: data.approved_at });
    },
    onError: (error) => {
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
    },
  });
  const approveBody =
    persistence === 'once' || pattern === null ? { persistence } : { persistence, params_pattern: pattern };
  const deny = useDenyApproval(approval.id, {
    onMutate: () => onFailed(null),
    onSuccess: (data) => onDecided({ kind: 'denied', persistence: data.persistence, at: data.denied_at }),
    onError: onFailed,
  });
  const denyBody = denyAlways ? { persistence: 'permanent' as const } : {};
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
          {choices.map((option) => {
            const disabled = option.value === 'session' && !hasSession;
            const choice = (
              <label key={option.value} className={`choice${disabled ? ' disabled' : ''}`}>
                <input
                  type="radio"
                  name={`${formId}-persistence`}
                  value={option.value}
                  checked={persistence === option.value}
                  disabled={disabled || busy}
                  aria-describedby={option.value === 'once' ? undefined : `${formId}-coverage`}
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
            if (option.value !== 'permanent') return choice;
            return (
              <Fragment key={option.value}>
                {choice}
                <CoverageNote
                  id={`${formId}-coverage`}
                  lead={`With “Always”${hasSession ? ' or “This agent session”' : ''}, ${agentName(approval)} may run ${title} without asking you.`}
                  rows={rows}
                />
              </Fragment>
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
            onClick={() => (confirmAlways ? confirm.current?.showModal() : approve.mutate(approveBody))}
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
          onConfirm={() => approve.mutate(approveBody)}
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
          <button type="button" className="button danger" disabled={busy} onClick={() => deny.mutate(denyBody)}>
            {denyAlways ? 'Deny always' : 'Deny this call'}
          </button>
        </div>
      </section>
    </>
  );
}

/**
 * Beside "Always", before the person decides: what "Always" (and "This agent session") would allow with the
 * argument choices as they stand, in words; it changes with them.
 */
function CoverageNote({ id, lead, rows }: { id: string; lead: string; rows: readonly PatternRow[] }) {
  return (
    <div className="coverage-note" id={id}>
      <p className="coverage-lead">{lead}</p>
      {coverageWords(rows).map((sentence, index) => (
        <p key={index}>{sentence}</p>
      ))}
    </div>
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
