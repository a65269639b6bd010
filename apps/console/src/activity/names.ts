import { useAgentNames, useConnections, useDelegations } from '../api/queries';

/** Names by id: the person's agents and the configured services (rows show names, never ids). */
export interface Names {
  readonly agents: ReadonlyMap<string, string>;
  readonly services: ReadonlyMap<string, string>;
  /** The MCP servers the person's grants delegate now (the agents list names them). */
  readonly resources: ReadonlyMap<string, string>;
}

/** The person's agents (the agents page's list) and every configured service (the connections page's list). */
export function useDirectory() {
  const agents = useDelegations();
  const services = useConnections();
  return {
    agents: agents.data?.data.map((agent) => ({ id: agent.agent_id, name: agent.display_name })) ?? [],
    services: services.data?.data.map((item) => ({ id: item.service.id, name: item.service.display_name })) ?? [],
    resources:
      agents.data?.data.flatMap((agent) =>
        agent.resources.map((resource) => ({ id: resource.id, name: resource.display_name })),
      ) ?? [],
  };
}

/**
 * Names for the rows shown: the directory's, plus an agent the person no longer delegates to
 * (not on the agents list) read once from its consent view; a deleted one stays unnamed.
 */
export function useNames(directory: ReturnType<typeof useDirectory>, agentIds: readonly string[]): Names {
  const known = new Set(directory.agents.map((agent) => agent.id));
  const missing = [...new Set(agentIds)].filter((id) => !known.has(id));
  const lookups = useAgentNames(missing);
  // Rebuilt each render: a few dozen entries at most.
  const agents = new Map(directory.agents.map((agent) => [agent.id, agent.name]));
  missing.forEach((id, index) => {
    const name = lookups[index]?.data;
    if (typeof name === 'string') agents.set(id, name);
  });
  return {
    agents,
    services: new Map(directory.services.map((service) => [service.id, service.name])),
    resources: new Map(directory.resources.map((resource) => [resource.id, resource.name])),
  };
}
