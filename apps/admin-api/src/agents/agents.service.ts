import { ApiError, canonicalIdProblem, Clock, Random, type Agent, type AgentSuspension } from '@broker/domain';
import { adminEvent, EventLedger, recordChange } from '@broker/events';
import { AgentRepository, PermissionSetRepository, type AgentInput } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import type { AgentDto } from './agent.dto';

/** Agent registration (admin). Every write records its `agent.*` event, by the admin principal, in its transaction. */
@Injectable()
export class AgentsService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly permissionSets: PermissionSetRepository,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly ledger: EventLedger,
  ) {}

  list(): Promise<Agent[]> {
    return this.agents.list();
  }

  async get(id: string): Promise<Agent> {
    const agent = await this.agents.findById(id);
    if (agent === undefined) throw new ApiError('agent not found', `no agent ${id}`);
    return agent;
  }

  async create(admin: string, dto: AgentDto): Promise<Agent> {
    const events = recordChange(this.ledger, (agent: Agent) =>
      adminEvent('agent.created', admin, { agentId: agent.id }, { display_name: agent.displayName }),
    );
    return this.agents.create(this.random.uuid(), await this.toInput(dto), this.clock.now(), events);
  }

  async replace(admin: string, id: string, dto: AgentDto): Promise<Agent> {
    const events = recordChange(this.ledger, (agent: Agent) =>
      adminEvent('agent.changed', admin, { agentId: agent.id }, { display_name: agent.displayName }),
    );
    const agent = await this.agents.replace(id, await this.toInput(dto), this.clock.now(), events);
    if (agent === undefined) throw new ApiError('agent not found', `no agent ${id}`);
    return agent;
  }

  /** Irreversible: the agent's client credentials and grants go with it. */
  async delete(admin: string, id: string): Promise<void> {
    const events = recordChange(this.ledger, (agentId: string) => adminEvent('agent.deleted', admin, { agentId }, {}));
    if (!(await this.agents.delete(id, events))) throw new ApiError('agent not found', `no agent ${id}`);
  }

  /**
   * Suspends the agent (docs/admin-api.md "Suspending an agent"): `agent.suspended` when it
   * begins; an agent suspended already keeps its suspension (time, administrator, reason).
   */
  async suspend(admin: string, id: string, reason: string | null | undefined): Promise<AgentSuspension> {
    const given = reason?.trim() ?? '';
    const events = recordChange(this.ledger, (suspension: AgentSuspension) =>
      adminEvent('agent.suspended', admin, { agentId: id }, { reason: suspension.reason }),
    );
    const outcome = await this.agents.suspend(id, admin, given === '' ? null : given, this.clock.now(), events);
    if (outcome === undefined) throw new ApiError('agent not found', `no agent ${id}`);
    return outcome.suspension;
  }

  /** Ends the agent's suspension, if any (`agent.resumed` only when one ended). */
  async resume(admin: string, id: string): Promise<void> {
    const events = recordChange(this.ledger, (ended: AgentSuspension) =>
      adminEvent('agent.resumed', admin, { agentId: id }, { reason: ended.reason }),
    );
    if ((await this.agents.resume(id, events)) === undefined) throw new ApiError('agent not found', `no agent ${id}`);
  }

  private async toInput(dto: AgentDto): Promise<AgentInput> {
    const canonicalId = dto.canonical_id ?? null;
    if (canonicalId !== null) {
      const problem = canonicalIdProblem(canonicalId);
      if (problem)
        throw new ApiError('validation failed', `canonical_id ${problem}`, [{ field: 'canonical_id', problem }]);
    }
    const refs = (dto.permission_sets ?? []).map((ref) => ({
      permissionSetId: ref.permission_set_id.toLowerCase(),
      requirementType: ref.requirement_type ?? 'mandatory',
    }));
    const ids = refs.map((ref) => ref.permissionSetId);
    if (new Set(ids).size !== ids.length)
      throw new ApiError('validation failed', 'permission_sets lists a permission set more than once', [
        { field: 'permission_sets', problem: 'duplicate permission_set_id' },
      ]);
    const existing = await this.permissionSets.existingIds(ids);
    const missing = ids.filter((id) => !existing.has(id));
    if (missing.length > 0) {
      throw new ApiError(
        'validation failed',
        `permission_sets: no permission set ${missing.join(', ')}`,
        missing.map((id) => ({ field: 'permission_sets', problem: `no permission set ${id}` })),
      );
    }
    return {
      displayName: dto.display_name,
      description: dto.description ?? null,
      canonicalId,
      clientId: dto.client_id ?? null,
      logoUrl: dto.logo_url ?? null,
      governanceUrl: dto.governance_url ?? null,
      userDocumentationUrl: dto.user_documentation_url ?? null,
      agentInterfaceUrl: dto.agent_interface_url ?? null,
      redirectUris: dedupe(dto.redirect_uris ?? []),
      allowedScopes: dedupe(dto.allowed_scopes ?? []),
      allowedResources: dedupe(dto.allowed_resources ?? []),
      clientUris: dedupe(dto.client_uris ?? []),
      dpopBoundAccessTokens: dto.dpop_bound_access_tokens ?? null,
      permissionSets: refs,
    };
  }
}

function dedupe(values: readonly string[]): string[] {
  return [...new Set(values)];
}
