import { OAuthError, scopesAllowedFor, type Agent } from '@broker/domain';

/** The requested scopes (space-delimited, RFC 6749 §3.3), de-duplicated. */
export function parseScope(scope: string | undefined): string[] {
  return [...new Set((scope ?? '').split(' ').filter(Boolean))];
}

/** Every requested scope must be in the agent's allowed_scopes; an empty list allows all (`scopesAllowedFor`). */
export function assertScopesAllowed(agent: Agent, scopes: readonly string[]): void {
  // The description never names the rejected scopes (docs/http-api.md).
  if (!scopesAllowedFor(agent, scopes))
    throw new OAuthError('invalid_scope', 'a requested scope is not allowed for this client');
}
