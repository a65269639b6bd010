// The demo agent's gateway deciding a tool call as a real gateway does (docs/approvals.md): before it asks the person,
// it reads the approvals sync state for the person and agent, and a decision the person remembered settles the call.
// Nothing here is production code; it is the demo's stand-in for a gateway, kept apart from scripts/demo.mjs so the
// rule it follows reads in one place.
import { createHash } from 'node:crypto';
import { minimatch } from 'minimatch';

/** The broker's glob dialect of `params_pattern` (docs/approvals.md, "Parameter patterns"), minimatch 11. */
const PATTERN_DIALECT = Object.freeze({
  dot: true,
  noext: true,
  nonegate: true,
  nocomment: true,
  nobrace: true,
  optimizationLevel: 0,
  preserveMultipleSlashes: true,
  platform: 'linux',
});

/** RFC 8785 canonical JSON of a parsed JSON value: sorted keys, no whitespace. */
export function canonicalJson(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
    .join(',')}}`;
}

/** `arguments_hash`: SHA-256 hex of the canonical JSON of the arguments. */
export function argumentsHash(args) {
  return createHash('sha256').update(canonicalJson(args), 'utf8').digest('hex');
}

/** A string is globbed; any other value matches only its own canonical JSON text, never a wildcard. */
function argumentMatches(value, glob) {
  if (value === undefined) return false;
  if (typeof value === 'string') return minimatch(value, glob, PATTERN_DIALECT);
  return !glob.includes('*') && glob === canonicalJson(value);
}

/**
 * Whether a decision of the sync state covers the call: the same tool (`tool_pattern` is the exact name), and
 * either the very arguments reviewed (`params_pattern` null: compared by `arguments_hash`) or every argument the
 * pattern names matching it (arguments it does not name may be anything).
 */
export function covers(summary, call) {
  if (summary.tool_pattern !== call.tool_name) return false;
  if (summary.params_pattern === null) return summary.arguments_hash === argumentsHash(call.arguments);
  return Object.entries(summary.params_pattern).every(
    ([name, glob]) => Object.hasOwn(call.arguments, name) && argumentMatches(call.arguments[name], glob),
  );
}

/**
 * What the sync state says about a new call of this agent for this person: `refused` by a remembered denial,
 * `allowed` by an approval not yet used (permanent, for this agent session, or a one-time approval of this very
 * call waiting to be used), else `ask`. A denial wins over an approval. A one-time denial answered the request
 * it was given for; a new call asks again.
 */
export function rememberedDecision(approvals, call, agentSessionId) {
  const inForce = approvals.filter(
    (summary) =>
      covers(summary, call) && (summary.persistence !== 'session' || summary.agent_session_id === agentSessionId),
  );
  const denial = inForce.find((summary) => summary.status === 'denied' && summary.persistence === 'permanent');
  if (denial !== undefined) return { kind: 'refused', approval: denial };
  const approval = inForce.find((summary) => summary.status === 'approved' && !summary.consumed);
  if (approval !== undefined) return { kind: 'allowed', approval };
  return { kind: 'ask' };
}

/**
 * The gateway's side of the approvals API for one person and one agent. `credentials()` gives fresh headers:
 * `subject` (the person's token through the agent, `Authorization: Bearer`) and `assertion` (the gateway's client
 * assertion, `X-Client-Assertion`).
 */
export function demoGateway({ broker, principal, agentId, credentials }) {
  /** The person's decisions for this agent, as the broker's sync answers them now (no long poll). */
  async function syncState(agentSessionId) {
    const { assertion } = await credentials();
    const query = new URLSearchParams({ principal, agent_session_id: agentSessionId });
    const answer = await fetch(`${broker}/api/approvals?${query}`, { headers: { 'x-client-assertion': assertion } });
    if (!answer.ok) throw new Error(`the broker refused the approvals sync: ${answer.status} ${await answer.text()}`);
    const { data } = await answer.json();
    return data.pairs.filter((pair) => pair.agent_id === agentId).flatMap((pair) => pair.approvals);
  }

  /** Uses a one-time approval: the broker records the call as made (a second use is refused). */
  async function consume(approvalId) {
    const { subject } = await credentials();
    const answer = await fetch(`${broker}/api/approvals/${encodeURIComponent(approvalId)}/consume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${subject}` },
    });
    if (!answer.ok) throw new Error(`the broker refused to consume ${approvalId}: ${answer.status}`);
  }

  /** Asks the person: 201 a new request, 200 the same call already waiting. */
  async function ask(call) {
    const { subject, assertion } = await credentials();
    const answer = await fetch(`${broker}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${subject}`,
        'x-client-assertion': assertion,
      },
      body: JSON.stringify(call),
    });
    const text = await answer.text();
    if (answer.status === 403 && text.includes('grant_required')) return { kind: 'no-grant' };
    if (!answer.ok) throw new Error(`the broker refused the approval request: ${answer.status} ${text}`);
    return { kind: answer.status === 201 ? 'asked' : 'waiting', id: JSON.parse(text).data.id };
  }

  /**
   * One intercepted tool call: `allowed` or `refused` by what the person remembered (no new request), else
   * `asked` (a new request on the Approvals page) or `waiting` (the same call already is), or `no-grant` (the
   * person has not allowed the agent yet).
   */
  async function toolCall(call) {
    const decided = rememberedDecision(
      await syncState(call.metadata.agent_session_id),
      call,
      call.metadata.agent_session_id,
    );
    if (decided.kind === 'allowed' && decided.approval.persistence === 'once') await consume(decided.approval.id);
    if (decided.kind !== 'ask') return { ...decided, call };
    return { ...(await ask(call)), call };
  }

  return { toolCall };
}
