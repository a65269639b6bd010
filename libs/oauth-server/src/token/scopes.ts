import { OAuthError, type Agent } from '@broker/domain';

/** The requested scopes (space-delimited, RFC 6749 §3.3), de-duplicated. */
export function parseScope(scope: string | undefined): string[] {
  return [...new Set((scope ?? '').split(' ').filter(Boolean))];
}

/** Every requested scope must be in the agent's allowed_scopes; an empty list allows all. */
export function assertScopesAllowed(agent: Agent, scopes: readonly string[]): void {
  if (agent.allowedScopes.length === 0) return;
  const allowed = new Set(agent.allowedScopes);
  // The description never names the rejected scopes (SPEC.md "Errors").
  if (scopes.some((scope) => !allowed.has(scope))) throw new OAuthError('invalid_scope', 'a requested scope is not allowed for this client');
}
