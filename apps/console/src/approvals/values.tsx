import { useId, useState } from 'react';
import type { components } from '../api/user-api';

export type Approval = components['schemas']['ApprovalView'];

/** Values longer than this are cut, with a button to see them whole. */
const SHORT = 160;

/** JSON text with keys sorted (RFC 8785 for the values a browser parses): how the broker compares non-string arguments. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** A value as the person reads it: strings as they are, anything else as pretty JSON. */
export function displayValue(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? 'null');
}

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
      <button type="button" className="link-button" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        {open ? 'Show less' : `Show all ${chars.length} characters`}
      </button>
    </>
  );
}

/** A tool call's arguments: each name with its value, and the whole as pretty JSON, in a collapsible block. */
export function ArgumentsView({ args, open = false, label = 'Arguments' }: { args: Record<string, unknown>; open?: boolean; label?: string }) {
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
                <LongValue value={displayValue(value)} />
              </dd>
            </div>
          ))}
        </dl>
      )}
      <details className="raw-json">
        <summary>JSON</summary>
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
    default:
      return 'not decided';
  }
}

/** The argument patterns of an approval, in words and as name → glob rows. */
export function PatternView({ pattern }: { pattern: Approval['params_pattern'] }) {
  if (pattern === null) return <p className="muted">Only the exact arguments that were reviewed.</p>;
  const entries = Object.entries(pattern);
  if (entries.length === 0) return <p className="muted">Any arguments.</p>;
  return (
    <dl className="arg-list">
      {entries.map(([name, glob], index) => (
        <div key={index} className="arg-row">
          <dt className="mono">{name}</dt>
          <dd>
            <LongValue value={glob} />
          </dd>
        </div>
      ))}
      <div className="arg-row">
        <dt className="muted">other arguments</dt>
        <dd className="muted">any value</dd>
      </div>
    </dl>
  );
}
