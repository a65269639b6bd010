import type { components } from '../api/user-api';

type Approval = components['schemas']['ApprovalView'];

/**
 * What a gateway may say about a request in its `metadata`, for the person deciding (README
 * "Tool approvals": `reason`, `tool_title`, `tool_description`): the agent's stated reason and
 * the tool in words come first; the rest is context, shown apart. `agent_session_id` is the
 * page's own fact. Values that are not text stay in the rest.
 */
export interface RequestContext {
  readonly reason: string | null;
  readonly title: string | null;
  readonly description: string | null;
  readonly rest: Record<string, unknown>;
}

const WORDS = ['reason', 'tool_title', 'tool_description'] as const;

export function requestContext(metadata: Record<string, unknown>): RequestContext {
  const rest: Record<string, unknown> = {};
  const words: Partial<Record<(typeof WORDS)[number], string>> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if ((WORDS as readonly string[]).includes(key) && typeof value === 'string' && value.trim() !== '')
      words[key as (typeof WORDS)[number]] = value.trim();
    else if (key !== 'agent_session_id')
      Object.defineProperty(rest, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return {
    reason: words.reason ?? null,
    title: words.tool_title ?? null,
    description: words.tool_description ?? null,
    rest,
  };
}

/**
 * What an agent's standard request (OpenID CIBA, docs/ciba.md) says about its tool call: the title and description
 * of its `authorization_details` entry and the MCP server it names (`locations[0]`); null for a gateway's request.
 */
export interface DirectRequest {
  readonly title: string | null;
  readonly description: string | null;
  readonly serverUri: string | null;
  readonly serverName: string | null;
  readonly bindingMessage: string | null;
}

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : null;

type DirectFields = Partial<
  Pick<Approval, 'requested_via' | 'authorization_details' | 'binding_message' | 'mcp_server_display_name'>
>;

export function directRequest(approval: DirectFields): DirectRequest | null {
  if (approval.requested_via !== 'ciba') return null;
  const entry: Record<string, unknown> = approval.authorization_details?.[0] ?? {};
  const locations = entry.locations;
  return {
    title: text(entry.title),
    description: text(entry.description),
    serverUri: Array.isArray(locations) ? text(locations[0]) : null,
    serverName: text(approval.mcp_server_display_name),
    bindingMessage: text(approval.binding_message),
  };
}

type Titled = Pick<Approval, 'tool_name' | 'metadata'> & DirectFields;

/** The tool as the person reads it: the request's own title (an agent's standard request, else the gateway's), else its name. */
export function toolTitle(approval: Titled): string {
  return directRequest(approval)?.title ?? requestContext(approval.metadata).title ?? approval.tool_name;
}

const RISK_ORDER: Record<string, number> = { critical: 0, medium: 1, low: 3 };

/** Pending approvals as the person reviews them: critical first, then medium, unstated, low; newest first within each. */
export function reviewOrder<T extends Pick<Approval, 'risk_level' | 'created_at'>>(items: readonly T[]): T[] {
  const rank = (item: T) => (item.risk_level === null ? 2 : (RISK_ORDER[item.risk_level] ?? 2));
  return [...items].sort((a, b) => rank(a) - rank(b) || Date.parse(b.created_at) - Date.parse(a.created_at));
}
