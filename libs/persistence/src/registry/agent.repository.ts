import { Clock, RegistryError, type Agent, type AgentSuspension, type RequirementType } from '@broker/domain';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import { constraintViolation, FOREIGN_KEY_VIOLATION, UNIQUE_VIOLATION } from '../persistence-errors';
import { ClientCache, type ClientRecord } from './client-cache';
import { AgentEntity, AgentPermissionSetEntity } from './registry.entities';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { endFamilies } from './refresh-token-families';

/** Everything of an agent an admin writes (its suspension has its own routes). */
export type AgentInput = Omit<Agent, 'id' | 'createdAt' | 'updatedAt' | 'suspension'>;

/** What suspending found: the agent's suspension, and whether this call began it (false: it was suspended already). */
export interface SuspensionOutcome {
  readonly suspension: AgentSuspension;
  readonly began: boolean;
}

function suspensionOf(
  entity: Pick<AgentEntity, 'suspendedAt' | 'suspendedBy' | 'suspensionReason'>,
): AgentSuspension | null {
  if (entity.suspendedAt === null || entity.suspendedAt === undefined || entity.suspendedBy === null) return null;
  return { suspendedAt: entity.suspendedAt, suspendedBy: entity.suspendedBy, reason: entity.suspensionReason ?? null };
}

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
    allowedResources: entity.allowedResources,
    clientUris: entity.clientUris,
    dpopBoundAccessTokens: entity.dpopBoundAccessTokens,
    permissionSets: refs
      .sort((a, b) => a.position - b.position)
      .map((ref) => ({
        permissionSetId: ref.permissionSetId,
        requirementType: ref.requirementType as RequirementType,
      })),
    suspension: suspensionOf(entity),
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
  };
}

function translate(error: unknown, input: AgentInput): never {
  const violation = constraintViolation(error);
  if (violation?.code === UNIQUE_VIOLATION && violation.constraint === 'agents_canonical_id_key') {
    throw new RegistryError(
      'duplicate_canonical_id',
      `canonical_id "${input.canonicalId ?? ''}" is already used by another agent`,
    );
  }
  if (violation?.code === FOREIGN_KEY_VIOLATION)
    throw new RegistryError('permission_set_missing', 'permission_sets: a referenced permission set no longer exists');
  throw error;
}

interface AgentRow {
  id: string;
  display_name: string;
  description: string | null;
  canonical_id: string | null;
  client_id: string | null;
  logo_url: string | null;
  governance_url: string | null;
  user_documentation_url: string | null;
  agent_interface_url: string | null;
  redirect_uris: string[];
  allowed_scopes: string[];
  allowed_resources: string[];
  client_uris: string[];
  dpop_bound_access_tokens: boolean | null;
  suspended_at: Date | null;
  suspended_by: string | null;
  suspension_reason: string | null;
  created_at: Date;
  updated_at: Date;
  refs: { permission_set_id: string; requirement_type: string; position: number }[];
}

interface ClientRow extends AgentRow {
  secret_sha256: Buffer | null;
}

/** The agent's permission-set assignments as one JSON array per agent row. */
const REFS_SQL = `COALESCE((SELECT json_agg(json_build_object('permission_set_id', r.permission_set_id, 'requirement_type', r.requirement_type, 'position', r.position))
                   FROM agent_permission_sets r WHERE r.agent_id = a.id), '[]'::json)`;

function rowToAgent(row: AgentRow): Agent {
  const entity: AgentEntity = {
    id: row.id,
    displayName: row.display_name,
    description: row.description,
    canonicalId: row.canonical_id,
    clientId: row.client_id,
    logoUrl: row.logo_url,
    governanceUrl: row.governance_url,
    userDocumentationUrl: row.user_documentation_url,
    agentInterfaceUrl: row.agent_interface_url,
    redirectUris: row.redirect_uris,
    allowedScopes: row.allowed_scopes,
    allowedResources: row.allowed_resources,
    clientUris: row.client_uris,
    dpopBoundAccessTokens: row.dpop_bound_access_tokens,
    suspendedAt: row.suspended_at,
    suspendedBy: row.suspended_by,
    suspensionReason: row.suspension_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  const refs = row.refs.map((ref) => ({
    agentId: row.id,
    permissionSetId: ref.permission_set_id,
    requirementType: ref.requirement_type,
    position: ref.position,
  }));
  return toAgent(entity, refs);
}

/** The token endpoint's client lookup: the agent, its assignments and its credential digest in one round trip. */
const CLIENT_SQL = `SELECT a.*, c.secret_sha256, ${REFS_SQL} AS refs
  FROM agents a LEFT JOIN agent_client_credentials c ON c.agent_id = a.id
 WHERE a.id = $1`;

/**
 * Every agent with its assignments, oldest first, as one JSON array in one row: one
 * statement whatever the number of agents, and one value to decode rather than a column
 * per agent (on PGlite the per-column decoding dominated a 100-agent list). `row_to_json`
 * names every column, so a new column needs no change here.
 */
const LIST_SQL = `SELECT COALESCE(json_agg(json_build_object('agent', row_to_json(a), 'refs', ${REFS_SQL}) ORDER BY a.created_at, a.id), '[]'::json) AS agents
  FROM agents a`;

/** An agent row as JSON: timestamps are ISO 8601 strings. */
type JsonAgentRow = Omit<AgentRow, 'created_at' | 'updated_at' | 'suspended_at' | 'refs'> & {
  created_at: string;
  updated_at: string;
  suspended_at: string | null;
};

/** Agents and their assigned permission sets. */
@Injectable()
export class AgentRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    /** The process's client cache (`Database.clientCache`), cleared by every write here. */
    private readonly clientCache: ClientCache,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly exchangeChanges: ExchangeChanges,
  ) {}

  /**
   * The agent with its credential digest, in one query (client authentication at the token
   * endpoint), served from `ClientCache` for up to `CLIENT_CACHE_TTL_MS`.
   */
  findClient(id: string): Promise<ClientRecord | undefined> {
    return this.clientCache.read(id, this.clock.nowMs(), () => this.loadClient(id));
  }

  private async loadClient(id: string): Promise<ClientRecord | undefined> {
    const rows = await this.dataSource.query<ClientRow[]>(CLIENT_SQL, [id]);
    const row = rows[0];
    if (row === undefined) return undefined;
    return { agent: rowToAgent(row), secretSha256: row.secret_sha256 };
  }

  /** Every agent with its assignments, oldest first (one statement). */
  async list(): Promise<Agent[]> {
    const rows = await this.dataSource.query<{ agents: { agent: JsonAgentRow; refs: AgentRow['refs'] }[] }[]>(LIST_SQL);
    return (rows[0]?.agents ?? []).map(({ agent, refs }) =>
      rowToAgent({
        ...agent,
        refs,
        created_at: new Date(agent.created_at),
        updated_at: new Date(agent.updated_at),
        suspended_at: agent.suspended_at === null ? null : new Date(agent.suspended_at),
      }),
    );
  }

  async findById(id: string): Promise<Agent | undefined> {
    const agent = await this.dataSource.getRepository(AgentEntity).findOneBy({ id });
    if (agent === null) return undefined;
    return toAgent(agent, await this.dataSource.getRepository(AgentPermissionSetEntity).findBy({ agentId: id }));
  }

  /** The agent with this `canonical_id` (unique). */
  async findByCanonicalId(canonicalId: string): Promise<Agent | undefined> {
    const agent = await this.dataSource.getRepository(AgentEntity).findOneBy({ canonicalId });
    if (agent === null) return undefined;
    return toAgent(agent, await this.dataSource.getRepository(AgentPermissionSetEntity).findBy({ agentId: agent.id }));
  }

  /** `events` (the ledger's `agent.created`) are appended in the same transaction. */
  async create(id: string, input: AgentInput, now: Date, events?: WithinTransaction<Agent>): Promise<Agent> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const entity = manager.create(AgentEntity, {
          ...columns(input),
          id,
          suspendedAt: null,
          suspendedBy: null,
          suspensionReason: null,
          createdAt: now,
          updatedAt: now,
        });
        await manager.insert(AgentEntity, entity);
        const agent = toAgent(entity, await this.writeRefs(manager, id, input));
        await events?.(agent, manager);
        return agent;
      });
    } catch (error) {
      translate(error, input);
    }
  }

  /** Full replacement; undefined when no such agent. `events` are appended in the same transaction, only when it was replaced. */
  async replace(
    id: string,
    input: AgentInput,
    now: Date,
    events?: WithinTransaction<Agent>,
  ): Promise<Agent | undefined> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const existing = await manager.findOne(AgentEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
        if (existing === null) return undefined;
        this.clientCache.invalidate();
        const entity = manager.merge(AgentEntity, existing, { ...columns(input), updatedAt: now });
        await manager.save(AgentEntity, entity);
        await manager.delete(AgentPermissionSetEntity, { agentId: id });
        const agent = toAgent(entity, await this.writeRefs(manager, id, input));
        await events?.(agent, manager);
        return agent;
      });
    } catch (error) {
      translate(error, input);
    } finally {
      this.clientCache.invalidate();
    }
  }

  /**
   * Deletes the agent with its credentials and assignments (cascade); false when none.
   * With `events`, the delete and its events share one transaction.
   */
  async delete(id: string, events?: WithinTransaction<string>): Promise<boolean> {
    try {
      return await this.transactions.run(async (manager, scope) => {
        // Its grants go with it: every exchange context of this process is read again.
        scope.afterCommit(() => this.exchangeChanges.forget());
        // Its refresh token families end first, atomically against a rotation in flight (the deletion
        // then deletes its grants and their tokens), taking the family locks before the grant rows'.
        await endFamilies(manager, 'SELECT family_id FROM refresh_tokens WHERE agent_id = $2', [id], this.clock.now());
        const deleted = ((await manager.delete(AgentEntity, { id })).affected ?? 0) > 0;
        if (deleted) await events?.(id, manager);
        return deleted;
      });
    } finally {
      this.clientCache.invalidate();
    }
  }

  /**
   * Suspends the agent (docs/admin-api.md "Suspending an agent"); undefined when no such agent.
   * Already suspended: the existing suspension, unchanged, and no event. Only the three
   * suspension columns are written: nothing the agent holds (grants, credentials, refresh token
   * families, approvals) changes. Once committed, this process's client and exchange caches are
   * dropped; other replicas drop theirs on `registry_changed` and `exchange_changed`.
   */
  async suspend(
    id: string,
    by: string,
    reason: string | null,
    now: Date,
    events?: WithinTransaction<AgentSuspension>,
  ): Promise<SuspensionOutcome | undefined> {
    try {
      return await this.transactions.run(async (manager, scope) => {
        scope.afterCommit(() => this.exchangeChanges.forget());
        const existing = await manager.findOne(AgentEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
        if (existing === null) return undefined;
        const current = suspensionOf(existing);
        if (current !== null) return { suspension: current, began: false };
        await manager.update(AgentEntity, { id }, { suspendedAt: now, suspendedBy: by, suspensionReason: reason });
        const suspension: AgentSuspension = { suspendedAt: now, suspendedBy: by, reason };
        await events?.(suspension, manager);
        return { suspension, began: true };
      });
    } finally {
      this.clientCache.invalidate();
    }
  }

  /**
   * Ends the agent's suspension: what it held works again as before. The suspension that ended,
   * or null when it was not suspended; undefined when no such agent. `events` only when one ended.
   */
  async resume(id: string, events?: WithinTransaction<AgentSuspension>): Promise<AgentSuspension | null | undefined> {
    try {
      return await this.transactions.run(async (manager, scope) => {
        scope.afterCommit(() => this.exchangeChanges.forget());
        const existing = await manager.findOne(AgentEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
        if (existing === null) return undefined;
        const ended = suspensionOf(existing);
        if (ended === null) return null;
        await manager.update(AgentEntity, { id }, { suspendedAt: null, suspendedBy: null, suspensionReason: null });
        await events?.(ended, manager);
        return ended;
      });
    } finally {
      this.clientCache.invalidate();
    }
  }

  private async writeRefs(
    manager: EntityManager,
    agentId: string,
    input: AgentInput,
  ): Promise<AgentPermissionSetEntity[]> {
    const refs = input.permissionSets.map((ref, position) =>
      manager.create(AgentPermissionSetEntity, {
        agentId,
        permissionSetId: ref.permissionSetId,
        requirementType: ref.requirementType,
        position,
      }),
    );
    if (refs.length > 0) await manager.insert(AgentPermissionSetEntity, refs);
    return refs;
  }
}

function columns(
  input: AgentInput,
): Omit<AgentEntity, 'id' | 'createdAt' | 'updatedAt' | 'suspendedAt' | 'suspendedBy' | 'suspensionReason'> {
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
    allowedResources: [...input.allowedResources],
    clientUris: [...input.clientUris],
    dpopBoundAccessTokens: input.dpopBoundAccessTokens,
  };
}
