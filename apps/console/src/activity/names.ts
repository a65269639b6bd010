import {
  useActivityNames,
  useAgentNames,
  useApprovalsNow,
  useConnections,
  useDelegations,
  type ApprovalNow,
} from '../api/queries';
import type { ActivityEvent } from './kinds';

/** An agent of the person's history: its name, and whether the person allows it now. */
export interface AgentName {
  readonly id: string;
  readonly name: string;
  readonly allowed: boolean;
}

/** An MCP server or a service, named, with its scopes described for people (scope → description). */
export interface Named {
  readonly name: string;
  readonly scopes: ReadonlyMap<string, string>;
}

/** Names by id (rows show names, never ids), and what became of the approvals the rows name. */
export interface Names {
  readonly agents: ReadonlyMap<string, string>;
  readonly services: ReadonlyMap<string, Named>;
  /** The registered MCP servers by id, and by the address events carry. */
  readonly resources: ReadonlyMap<string, Named>;
  readonly resourcesByUri: ReadonlyMap<string, Named>;
  /** By approval id; absent while it is being read. */
  readonly approvals: ReadonlyMap<string, ApprovalNow>;
}

/**
 * Every agent of the person's history (the activity API's, a revoked one too) and those they allow now (the agents
 * page's list), every configured service with its scopes (the connections page's list), every MCP server.
 */
export function useDirectory() {
  const history = useActivityNames();
  const delegations = useDelegations();
  const services = useConnections();
  const agents = new Map<string, AgentName>();
  for (const agent of history.data?.data.agents ?? [])
    agents.set(agent.agent_id, { id: agent.agent_id, name: agent.display_name, allowed: agent.allowed });
  for (const agent of delegations.data?.data ?? [])
    agents.set(agent.agent_id, { id: agent.agent_id, name: agent.display_name, allowed: true });
  return {
    agents: [...agents.values()].sort(
      (a, b) => Number(b.allowed) - Number(a.allowed) || a.name.localeCompare(b.name) || a.id.localeCompare(b.id),
    ),
    services:
      services.data?.data.map((item) => ({
        id: item.service.id,
        name: item.service.display_name,
        scopes: new Map(item.service.scopes.map((scope) => [scope.scope, scope.description])),
      })) ?? [],
    resources:
      history.data?.data.resources.map((resource) => ({
        id: resource.id,
        uri: resource.resource_uri,
        name: resource.display_name,
        scopes: new Map(resource.scopes.map((scope) => [scope.scope, scope.description])),
      })) ?? [],
  };
}

/** The approvals the events name (their `approval_id`), each once. */
function approvalIds(events: readonly ActivityEvent[]): string[] {
  const ids = new Set<string>();
  for (const event of events) {
    const id = event.details['approval_id'];
    if (event.type.startsWith('approval.') && typeof id === 'string' && id !== '') ids.add(id);
  }
  return [...ids];
}

/**
 * Names for the rows shown: the directory's, plus an agent it does not know (deleted since, or named only by an
 * event the names were read before) read once from its consent view; a deleted one stays unnamed. The approvals
 * the rows name are read as they are now, so a request already decided says so.
 */
export function useNames(directory: ReturnType<typeof useDirectory>, events: readonly ActivityEvent[]): Names {
  const known = new Set(directory.agents.map((agent) => agent.id));
  const missing = [...new Set(events.flatMap((event) => (event.agent_id === null ? [] : [event.agent_id])))].filter(
    (id) => !known.has(id),
  );
  const lookups = useAgentNames(missing);
  const ids = approvalIds(events);
  const approvals = useApprovalsNow(ids);
  // Rebuilt each render: a few dozen entries at most.
  const agents = new Map(directory.agents.map((agent) => [agent.id, agent.name]));
  missing.forEach((id, index) => {
    const name = lookups[index]?.data;
    if (typeof name === 'string') agents.set(id, name);
  });
  const states = new Map<string, ApprovalNow>();
  ids.forEach((id, index) => {
    const state = approvals[index]?.data;
    if (state !== undefined) states.set(id, state);
  });
  return {
    agents,
    services: new Map(directory.services.map((service) => [service.id, service])),
    resources: new Map(directory.resources.map((resource) => [resource.id, resource])),
    resourcesByUri: new Map(directory.resources.map((resource) => [resource.uri, resource])),
    approvals: states,
  };
}
