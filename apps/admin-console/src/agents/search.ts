/** What the agents list is searched by: the name, the canonical id, the upstream client id and the agent id. */
export interface Searchable {
  readonly id: string;
  readonly display_name: string;
  readonly canonical_id: string | null;
  readonly client_id: string | null;
}

/**
 * Whether the agent matches what the administrator typed: every word of it appears, case-insensitively, in its name,
 * canonical id, upstream client id or id (its client id at the token endpoint). Nothing typed matches every agent.
 */
export function matchesSearch(agent: Searchable, search: string): boolean {
  const words = search
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '');
  const haystack = [agent.display_name, agent.canonical_id ?? '', agent.client_id ?? '', agent.id]
    .join('\n')
    .toLowerCase();
  return words.every((word) => haystack.includes(word));
}
