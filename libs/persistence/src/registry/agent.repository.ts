import { ApiError, type Agent, type RequirementType } from '@broker/domain';
import { In, type DataSource, type EntityManager } from 'typeorm';
import { constraintViolation, FOREIGN_KEY_VIOLATION, UNIQUE_VIOLATION } from '../persistence-errors';
import { AgentEntity, AgentPermissionSetEntity } from './registry.entities';

/** Everything of an agent an admin writes. */
export type AgentInput = Omit<Agent, 'id' | 'createdAt' | 'updatedAt'>;

function toAgent(entity: AgentEntity, refs: AgentPermissionSetEntity[]): Agent {
  return {
    id: entity.id,
    displayName: entity.displayName,
    description: entity.description,
    canonicalId: entity.canonicalId,
    clientId: entity.clientId,
    logoUrl: entity.logoUrl,
    governanceUrl: entity.governanceUrl,
    userDocumentationUrl: entity.userDocumentationUrl,
    agentInterfaceUrl: entity.agentInterfaceUrl,
    redirectUris: entity.redirectUris,
    allowedScopes: entity.allowedScopes,
    clientUris: entity.clientUris,
    permissionSets: refs
      .sort((a, b) => a.position - b.position)
      .map((ref) => ({ permissionSetId: ref.permissionSetId, requirementType: ref.requirementType as RequirementType })),
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
  };
}

function translate(error: unknown, input: AgentInput): never {
  const violation = constraintViolation(error);
  if (violation?.code === UNIQUE_VIOLATION && violation.constraint === 'agents_canonical_id_key') {
    throw new ApiError('conflict', `canonical_id "${input.canonicalId ?? ''}" is already used by another agent`);
  }
  if (violation?.code === FOREIGN_KEY_VIOLATION) throw new ApiError('validation failed', 'permission_sets: a referenced permission set no longer exists');
  throw error;
}

/** Agents and their assigned permission sets. */
export class AgentRepository {
  constructor(private readonly dataSource: DataSource) {}

  async list(): Promise<Agent[]> {
    const agents = await this.dataSource.getRepository(AgentEntity).find({ order: { createdAt: 'ASC', id: 'ASC' } });
    const refs = agents.length === 0 ? [] : await this.dataSource.getRepository(AgentPermissionSetEntity).findBy({ agentId: In(agents.map((a) => a.id)) });
    return agents.map((agent) => toAgent(agent, refs.filter((ref) => ref.agentId === agent.id)));
  }

  async findById(id: string): Promise<Agent | undefined> {
    const agent = await this.dataSource.getRepository(AgentEntity).findOneBy({ id });
    if (agent === null) return undefined;
    return toAgent(agent, await this.dataSource.getRepository(AgentPermissionSetEntity).findBy({ agentId: id }));
  }

  async create(id: string, input: AgentInput, now: Date): Promise<Agent> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const entity = manager.create(AgentEntity, { ...columns(input), id, createdAt: now, updatedAt: now });
        await manager.insert(AgentEntity, entity);
        return toAgent(entity, await this.writeRefs(manager, id, input));
      });
    } catch (error) {
      translate(error, input);
    }
  }

  /** Full replacement; undefined when no such agent. */
  async replace(id: string, input: AgentInput, now: Date): Promise<Agent | undefined> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const existing = await manager.findOne(AgentEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
        if (existing === null) return undefined;
        const entity = manager.merge(AgentEntity, existing, { ...columns(input), updatedAt: now });
        await manager.save(AgentEntity, entity);
        await manager.delete(AgentPermissionSetEntity, { agentId: id });
        return toAgent(entity, await this.writeRefs(manager, id, input));
      });
    } catch (error) {
      translate(error, input);
    }
  }

  /** Deletes the agent with its credentials and assignments (cascade); false when none. */
  async delete(id: string): Promise<boolean> {
    const result = await this.dataSource.getRepository(AgentEntity).delete({ id });
    return (result.affected ?? 0) > 0;
  }

  private async writeRefs(manager: EntityManager, agentId: string, input: AgentInput): Promise<AgentPermissionSetEntity[]> {
    const refs = input.permissionSets.map((ref, position) =>
      manager.create(AgentPermissionSetEntity, { agentId, permissionSetId: ref.permissionSetId, requirementType: ref.requirementType, position }),
    );
    if (refs.length > 0) await manager.insert(AgentPermissionSetEntity, refs);
    return refs;
  }
}

function columns(input: AgentInput): Omit<AgentEntity, 'id' | 'createdAt' | 'updatedAt'> {
  return {
    displayName: input.displayName,
    description: input.description,
    canonicalId: input.canonicalId,
    clientId: input.clientId,
    logoUrl: input.logoUrl,
    governanceUrl: input.governanceUrl,
    userDocumentationUrl: input.userDocumentationUrl,
    agentInterfaceUrl: input.agentInterfaceUrl,
    redirectUris: [...input.redirectUris],
    allowedScopes: [...input.allowedScopes],
    clientUris: [...input.clientUris],
  };
}
