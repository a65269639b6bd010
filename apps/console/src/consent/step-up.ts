import type { AgentDetail, ConsentResource, PermissionSet } from './types';

/**
 * Incremental consent: the MCP servers the pending authorization request asks a token for that
 * the person's active grant does not delegate yet. Empty without a grant (the full page is shown).
 */
export function pendingResources(detail: AgentDetail, hasGrant: boolean): readonly ConsentResource[] {
  if (!hasGrant) return [];
  return detail.resources.filter((resource) => resource.requested && !resource.granted);
}

/** The agent's permission sets that bundle at least one of the pending MCP servers. */
export function setsCovering(sets: readonly PermissionSet[], pending: ReadonlySet<string>): PermissionSet[] {
  return sets.filter((set) => set.resources.some((entry) => pending.has(entry.resource_id)));
}

/**
 * The grant after incremental consent: everything the current grant delegates, unchanged, plus,
 * under each chosen set, the pending MCP servers it bundles (the grant is replaced as a whole).
 */
export function widenedGrant(
  current: Readonly<Record<string, readonly string[]>>,
  chosen: readonly PermissionSet[],
  pending: ReadonlySet<string>,
): Record<string, string[]> {
  const next: Record<string, string[]> = Object.fromEntries(
    Object.entries(current).map(([setId, ids]) => [setId, [...ids]]),
  );
  for (const set of chosen) {
    const added = set.resources.map((entry) => entry.resource_id).filter((id) => pending.has(id));
    next[set.id] = [...new Set([...(next[set.id] ?? []), ...added])];
  }
  return next;
}
