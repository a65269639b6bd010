import { useId, useState } from 'react';
import type { components } from '../api/user-api';
import { globMeaning } from './patterns';

export type Approval = components['schemas']['ApprovalView'];

/** Values longer than this are cut, with a button to see them whole. */
const SHORT = 160;

/** One value, cut at {@link SHORT} characters with a "Show all" toggle; always text, never HTML. */
export function LongValue({ value }: { value: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const chars = Array.from(value);
  if (chars.length <= SHORT) return <code className="arg-value">{value}</code>;
  return (
    <>
      <code className="arg-value" id={id}>
        {open ? value : `${chars.slice(0, SHORT).join('')}…`}
      </code>
      <button
        type="button"
        className="link-button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen(!open)}
      >
        {open ? 'Show less' : `Show all ${chars.length} characters`}
      </button>
    </>
  );
}

/** Nested values deeper than this are shown as one line of text. */
const MAX_DEPTH = 6;

/**
 * A value as a person reads it: text as it is, numbers and yes/no as words, lists as lists
 * and objects as name → value lists, nested; never escaped JSON. Always text, never HTML.
 */
export function StructuredValue({ value, depth = 0 }: { value: unknown; depth?: number }) {
  if (typeof value === 'string')
    return value === '' ? <span className="muted">empty text</span> : <LongValue value={value} />;
  if (value === null || value === undefined) return <span className="muted">nothing (null)</span>;
  if (typeof value === 'boolean') return <code className="arg-value">{value ? 'yes' : 'no'}</code>;
  if (
    typeof value === 'number' ||
    typeof value === 'bigint' ||
    typeof value === 'symbol' ||
    typeof value === 'function'
  )
    return <code className="arg-value">{String(value)}</code>;
  if (depth >= MAX_DEPTH) return <LongValue value={JSON.stringify(value)} />;
  if (Array.isArray(value))
    return value.length === 0 ? (
      <span className="muted">an empty list</span>
    ) : (
      <ul className="arg-items">
        {(value as unknown[]).map((item, index) => (
          <li key={index}>
            <StructuredValue value={item} depth={depth + 1} />
          </li>
        ))}
      </ul>
    );
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return <span className="muted">no fields</span>;
  return (
    <dl className="arg-list nested">
      {entries.map(([name, item], index) => (
        <div key={index} className="arg-row">
          <dt className="mono">{name}</dt>
          <dd>
            <StructuredValue value={item} depth={depth + 1} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** A tool call's arguments (or other named values): each name with its value, structured; the raw JSON for engineers, folded. */
export function ArgumentsView({
  args,
  open = false,
  label = 'Arguments',
}: {
  args: Record<string, unknown>;
  open?: boolean;
  label?: string;
}) {
  const entries = Object.entries(args);
  return (
    <details className="args" open={open}>
      <summary>
        {label} <span className="muted">({entries.length === 0 ? 'none' : entries.length})</span>
      </summary>
      {entries.length === 0 ? (
        <p className="muted">No arguments.</p>
      ) : (
        <dl className="arg-list">
          {entries.map(([name, value], index) => (
            <div key={index} className="arg-row">
              <dt className="mono">{name}</dt>
              <dd>
                <StructuredValue value={value} />
              </dd>
            </div>
          ))}
        </dl>
      )}
      <details className="raw-json">
        <summary>As JSON</summary>
        <pre className="json">{JSON.stringify(args, null, 2)}</pre>
      </details>
    </details>
  );
}

const RISK: Record<string, { label: string; tone: string }> = {
  low: { label: 'Low risk', tone: 'success' },
  medium: { label: 'Medium risk', tone: 'warning' },
  critical: { label: 'Critical risk', tone: 'danger' },
};

export function RiskBadge({ level }: { level: Approval['risk_level'] }) {
  const risk = level === null ? undefined : RISK[level];
  if (risk === undefined) return <span className="badge">Risk not stated</span>;
  return <span className={`badge ${risk.tone}`}>{risk.label}</span>;
}

/** The agent's name, or its id when the broker does not know the name. */
export function agentName(approval: Pick<Approval, 'agent_display_name' | 'agent_id'>): string {
  return approval.agent_display_name ?? `Agent ${approval.agent_id}`;
}

/** What a decided approval covers, in words. */
export function persistenceWords(persistence: Approval['persistence']): string {
  switch (persistence) {
    case 'once':
      return 'this call only';
    case 'session':
      return 'this agent session';
    case 'permanent':
      return 'always, until revoked';
    case null:
      return 'not decided';
  }
}

/** What one stored glob allows, in words (README "Parameter patterns"). */
export function GlobWords({ glob, reviewed }: { glob: string; reviewed: unknown }) {
  const meaning = globMeaning(glob, reviewed);
  if (meaning.kind === 'exactly')
    return (
      <>
        <span className="muted">exactly </span>
        <StructuredValue value={meaning.value} />
      </>
    );
  if (meaning.kind === 'words') return <span>{meaning.text}</span>;
  return (
    <>
      <span className="muted">text matching the pattern </span>
      <LongValue value={meaning.glob} />
    </>
  );
}

/** The argument patterns of an approval, in words, beside the reviewed arguments they were made from. */
export function PatternView({ pattern, args }: { pattern: Approval['params_pattern']; args: Record<string, unknown> }) {
  if (pattern === null) return <p className="muted">Only the exact arguments that were reviewed.</p>;
  const entries = Object.entries(pattern);
  if (entries.length === 0) return <p className="muted">Any arguments.</p>;
  return (
    <dl className="arg-list">
      {entries.map(([name, glob], index) => (
        <div key={index} className="arg-row">
          <dt className="mono">{name}</dt>
          <dd>
            <GlobWords
              glob={glob}
              reviewed={Object.prototype.hasOwnProperty.call(args, name) ? args[name] : undefined}
            />
          </dd>
        </div>
      ))}
      {/* Reviewed arguments the pattern leaves free, by name. */}
      {Object.keys(args)
        .filter((name) => !Object.prototype.hasOwnProperty.call(pattern, name))
        .map((name, index) => (
          <div key={`free-${index}`} className="arg-row">
            <dt className="mono">{name}</dt>
            <dd>any value</dd>
          </div>
        ))}
      <OtherArgumentsRow />
    </dl>
  );
}

/** The last row of a pattern in words: arguments the reviewed call did not have are not constrained. */
export function OtherArgumentsRow() {
  return (
    <div className="arg-row">
      <dt className="muted">other arguments</dt>
      <dd className="muted">any value</dd>
    </div>
  );
}
