import { Clock, type Principal } from '@broker/domain';
import { EventRepository, ProtectedResourceRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import type { ActivityNamesResponse } from './activity-names.response';

/**
 * The names a person's activity refers to: the agents of their own history (the repository takes the owner, so
 * another person's agents never appear) and the registered MCP servers.
 */
@Injectable()
export class ActivityNamesService {
  constructor(
    private readonly events: EventRepository,
    private readonly resources: ProtectedResourceRepository,
    private readonly clock: Clock,
  ) {}

  async names(principal: Principal): Promise<ActivityNamesResponse> {
    const [agents, resources] = await Promise.all([
      this.events.historyAgents(principal.id, this.clock.now()),
      this.resources.list(),
    ]);
    return {
      data: {
        agents: agents.map((agent) => ({
          agent_id: agent.agentId,
          display_name: agent.displayName,
          allowed: agent.allowed,
        })),
        resources: resources.map((resource) => ({
          id: resource.id,
          resource_uri: resource.resourceUri,
          display_name: resource.displayName,
          scopes: resource.scopes.map((scope) => ({ scope: scope.scope, description: scope.description })),
        })),
      },
    };
  }
}
