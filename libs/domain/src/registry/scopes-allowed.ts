import type { Agent } from './registry.types';

/**
 * Offline-access scopes (OpenID Connect Core §11 `offline_access`, and its bare form):
 * impersonation always permits them, whatever the target's `allowed_scopes`
 * (docs/oauth2.md, "User impersonation"). Passed as `reserved` by the callers whose rule exempts them.
 */
export const OFFLINE_SCOPES: ReadonlySet<string> = new Set(['offline', 'offline_access']);

/** Options of {@link scopesAllowedFor}. */
export interface ScopeRuleOptions {
  /** Scopes permitted whatever the agent's `allowed_scopes` (default: none). */
  readonly reserved?: ReadonlySet<string>;
}

/**
 * The "scope allowed for this agent" rule (docs/admin-api.md): every requested scope is in
 * the agent's `allowed_scopes`, or reserved by the caller; an empty `allowed_scopes` allows
 * every scope. The callers answer `invalid_scope` without naming the rejected scope.
 */
export function scopesAllowedFor(
  agent: Pick<Agent, 'allowedScopes'>,
  requested: readonly string[],
  options: ScopeRuleOptions = {},
): boolean {
  if (agent.allowedScopes.length === 0) return true;
  const allowed = new Set(agent.allowedScopes);
  const reserved = options.reserved;
  return requested.every((scope) => allowed.has(scope) || (reserved?.has(scope) ?? false));
}
