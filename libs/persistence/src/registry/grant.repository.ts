import type { DelegationSummary, Grant, GrantDelegation, GrantResourceDelegation } from '@broker/domain';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { endFamilies, familyDelegated } from './refresh-token-families';

interface GrantRow {
  id: string;
  principal: string;
  agent_id: string;
  valid_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface DelegationRow {
  grant_id: string;
  permission_set_id: string;
  service_id: string;
  scopes: string[];
}

interface ResourceDelegationRow {
  grant_id: string;
  permission_set_id: string;
  resource_id: string;
  scopes: string[];
}

/** A grant's delegations as read: third-party services and protected resources. */
interface Delegations {
  readonly services: readonly DelegationRow[];
  readonly resources: readonly ResourceDelegationRow[];
}

/** A delegated protected resource as the summaries query aggregates it. */
interface ResourceRow {
  id: string;
  display_name: string;
  resource_uri: string;
  logo_url: string | null;
}

/**
 * The one "grant is active" rule (active until `valid_until`
 * passes; null is indefinite) as a condition on alias `g`, with `now` as parameter
 * `$nowParam`. Every query that reads active grants (here, the sessions overview, the token
 * exchange lookup) uses it, so the rule is written once and always compared in SQL with the
 * caller's clock, never filtered in memory.
 */
export function active(nowParam: number): string {
  return `(g.valid_until IS NULL OR g.valid_until > $${nowParam})`;
}

/**
 * Grants: one per (principal, agent), created or replaced wholesale by an upsert on that
 * unique key (safe under concurrent requests: the second waits for the first's row lock
 * and then replaces it). Every read takes the owner and `now`; expired grants are absent.
 */
@Injectable()
export class GrantRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly exchangeChanges: ExchangeChanges,
  ) {}

  /** The principal's active grant for the agent. */
  async findActive(principal: string, agentId: string, now: Date): Promise<Grant | undefined> {
    const rows = await this.dataSource.query<GrantRow[]>(
      `SELECT g.* FROM grants g WHERE g.principal = $1 AND g.agent_id = $2 AND ${active(3)}`,
      [principal, agentId, now],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return toGrant(row, await this.delegations(this.dataSource.manager, [row.id]));
  }

  /** The id of the principal's active grant for the agent (what a refresh token family is bound to). */
  async activeId(principal: string, agentId: string, now: Date): Promise<string | undefined> {
    const rows = await this.dataSource.query<{ id: string }[]>(
      `SELECT g.id FROM grants g WHERE g.principal = $1 AND g.agent_id = $2 AND ${active(3)}`,
      [principal, agentId, now],
    );
    return rows[0]?.id;
  }

  /** Whether the principal has an active grant for the agent (one indexed lookup). */
  async hasActive(principal: string, agentId: string, now: Date): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM grants g WHERE g.principal = $1 AND g.agent_id = $2 AND ${active(3)}`,
      [principal, agentId, now],
    );
    return rows.length > 0;
  }

  /**
   * The scopes the principal's active grant for the agent delegates for a protected resource
   * (the union over the permission sets delegating it); undefined when there is no active grant
   * or it does not delegate the resource. One indexed read (grants by principal and agent).
   */
  async resourceScopes(
    principal: string,
    agentId: string,
    resourceId: string,
    now: Date,
  ): Promise<ReadonlySet<string> | undefined> {
    const rows = await this.dataSource.query<{ scopes: string[] }[]>(
      `SELECT d.scopes FROM grants g JOIN grant_resources d ON d.grant_id = g.id
        WHERE g.principal = $1 AND g.agent_id = $2 AND d.resource_id = $3 AND ${active(4)}`,
      [principal, agentId, resourceId, now],
    );
    if (rows.length === 0) return undefined;
    return new Set(rows.flatMap((row) => row.scopes));
  }

  /**
   * Whether the principal's active grant for the agent delegates, for every one of `uris`, a
   * third-party service whose `protected_resources` lists it (how an MCP server was put behind
   * the broker before protected resources were registered: the person consented to that service).
   */
  async delegatesServiceResources(
    principal: string,
    agentId: string,
    uris: readonly string[],
    now: Date,
  ): Promise<boolean> {
    const rows = await this.dataSource.query<{ covered: number }[]>(
      `SELECT count(DISTINCT r.uri)::int AS covered
         FROM grants g JOIN grant_delegations d ON d.grant_id = g.id JOIN service_protected_resources r ON r.service_id = d.service_id
        WHERE g.principal = $1 AND g.agent_id = $2 AND r.uri = ANY($3) AND ${active(4)}`,
      [principal, agentId, [...uris], now],
    );
    return (rows[0]?.covered ?? 0) === new Set(uris).size;
  }

  /** Agents the principal has an active grant for, by display name then agent id. */
  async summaries(principal: string, now: Date): Promise<DelegationSummary[]> {
    const rows = await this.dataSource.query<
      {
        agent_id: string;
        display_name: string;
        logo_url: string | null;
        services: string;
        resources: ResourceRow[];
        updated_at: Date;
        valid_until: Date | null;
      }[]
    >(
      `SELECT a.id AS agent_id, a.display_name, a.logo_url, g.updated_at, g.valid_until,
              (SELECT count(DISTINCT d.service_id) FROM grant_delegations d WHERE d.grant_id = g.id) AS services,
              (SELECT coalesce(json_agg(json_build_object('id', r.id, 'display_name', r.display_name, 'resource_uri', r.resource_uri, 'logo_url', r.logo_url) ORDER BY r.display_name COLLATE "C", r.id), '[]')
                 FROM protected_resources r WHERE r.id IN (SELECT d.resource_id FROM grant_resources d WHERE d.grant_id = g.id)) AS resources
         FROM grants g JOIN agents a ON a.id = g.agent_id
        WHERE g.principal = $1 AND ${active(2)}
        ORDER BY a.display_name COLLATE "C" ASC, a.id ASC`,
      [principal, now],
    );
    return rows.map((row) => ({
      agentId: row.agent_id,
      displayName: row.display_name,
      logoUrl: row.logo_url,
      activeGrantCount: Number(row.services),
      resources: row.resources.map((r) => ({
        id: r.id,
        displayName: r.display_name,
        resourceUri: r.resource_uri,
        logoUrl: r.logo_url,
      })),
      lastModifiedAt: row.updated_at,
      expiresAt: row.valid_until,
    }));
  }

  /**
   * Creates the principal's grant for the agent, or replaces it wholesale (delegations
   * included). `created` tells which; an expired grant being replaced counts as created.
   * `started`: no grant was active before (none, or one past its `valid_until`).
   * `within` runs in the same transaction right after the grant row is written
   * (its event), so the event commits with the grant and a failure after it (a delegation
   * naming a permission set deleted meanwhile) rolls both back.
   */
  async upsert(
    id: string,
    principal: string,
    agentId: string,
    validUntil: Date | null,
    delegations: readonly GrantDelegation[],
    resourceDelegations: readonly GrantResourceDelegation[],
    now: Date,
    within?: WithinTransaction<{ grant: Grant; created: boolean; started: boolean }>,
  ): Promise<{ grant: Grant; created: boolean; started: boolean }> {
    return this.transactions.run(async (manager, scope) => {
      scope.afterCommit(() => this.exchangeChanges.forget(principal));
      // `started`: no active grant before this one (none, or one past its valid_until), read under the row's lock
      // (a statement of its own: in the upsert's own statement the row it updates is no longer there to lock).
      const before = await manager.query<unknown[]>(
        `SELECT 1 FROM grants g WHERE g.principal = $1 AND g.agent_id = $2 AND ${active(3)} FOR UPDATE`,
        [principal, agentId, now],
      );
      const rows = await manager.query<(GrantRow & { created: boolean })[]>(
        `INSERT INTO grants AS g (id, principal, agent_id, valid_until, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $5)
           ON CONFLICT (principal, agent_id) DO UPDATE
             SET valid_until = EXCLUDED.valid_until,
                 updated_at  = EXCLUDED.updated_at,
                 created_at  = CASE WHEN ${active(5)} THEN g.created_at ELSE EXCLUDED.created_at END
           RETURNING g.*, (xmax = 0) AS created`,
        [id, principal, agentId, validUntil, now],
      );
      const row = rows[0] as GrantRow & { created: boolean };
      const written: Delegations = {
        services: delegations.map((d) => ({
          grant_id: row.id,
          permission_set_id: d.permissionSetId,
          service_id: d.serviceId,
          scopes: [...d.scopes],
        })),
        resources: resourceDelegations.map((d) => ({
          grant_id: row.id,
          permission_set_id: d.permissionSetId,
          resource_id: d.resourceId,
          scopes: [...d.scopes],
        })),
      };
      const result = { grant: toGrant(row, written), created: row.created, started: before.length === 0 };
      await within?.(result, manager);
      await manager.query('DELETE FROM grant_delegations WHERE grant_id = $1', [row.id]);
      for (const [position, delegation] of delegations.entries()) {
        await manager.query(
          'INSERT INTO grant_delegations (grant_id, permission_set_id, service_id, scopes, position) VALUES ($1, $2, $3, $4, $5)',
          [row.id, delegation.permissionSetId, delegation.serviceId, JSON.stringify(delegation.scopes), position],
        );
      }
      await manager.query('DELETE FROM grant_resources WHERE grant_id = $1', [row.id]);
      for (const [position, delegation] of resourceDelegations.entries()) {
        await manager.query(
          'INSERT INTO grant_resources (grant_id, permission_set_id, resource_id, scopes, position) VALUES ($1, $2, $3, $4, $5)',
          [row.id, delegation.permissionSetId, delegation.resourceId, JSON.stringify(delegation.scopes), position],
        );
      }
      await endFamiliesBeyond(manager, row.id, now);
      return result;
    });
  }

  /**
   * Deletes the principal's active grant for the agent; the deleted grant, or undefined when
   * none. `within` (the revocation's event) runs in the deletion's transaction.
   */
  async deleteActive(
    principal: string,
    agentId: string,
    now: Date,
    within?: WithinTransaction<Grant>,
  ): Promise<Grant | undefined> {
    return this.transactions.run(async (manager, scope) => {
      scope.afterCommit(() => this.exchangeChanges.forget(principal));
      await endFamiliesOfGrant(manager, principal, agentId, now);
      const rows = await manager.query<GrantRow[]>(
        `SELECT g.* FROM grants g WHERE g.principal = $1 AND g.agent_id = $2 AND ${active(3)} FOR UPDATE`,
        [principal, agentId, now],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      const delegations = await this.delegations(manager, [row.id]);
      await manager.query('DELETE FROM grants WHERE id = $1', [row.id]);
      const grant = toGrant(row, delegations);
      await within?.(grant, manager);
      return grant;
    });
  }

  /**
   * Agents whose active grant from `principal` delegates `serviceId` (they lose access
   * when the session with the service ends), by display name then id.
   */
  async agentsDelegatingService(
    principal: string,
    serviceId: string,
    now: Date,
  ): Promise<{ agentId: string; displayName: string }[]> {
    const rows = await this.dataSource.query<{ agent_id: string; display_name: string }[]>(
      `SELECT DISTINCT a.id AS agent_id, a.display_name
         FROM grants g JOIN grant_delegations d ON d.grant_id = g.id JOIN agents a ON a.id = g.agent_id
        WHERE g.principal = $1 AND d.service_id = $2 AND ${active(3)}
        ORDER BY a.display_name, a.id`,
      [principal, serviceId, now],
    );
    return rows.map((row) => ({ agentId: row.agent_id, displayName: row.display_name }));
  }

  /**
   * Deletes the principal's grant for the agent whatever its state (an empty POST); the
   * deleted grant's id and `valid_until`, or undefined when there was none.
   * `within` (a revocation's, or an expired grant's removal's, event) runs in the deletion's
   * transaction.
   */
  async deleteAny(
    principal: string,
    agentId: string,
    now: Date,
    within?: WithinTransaction<Pick<Grant, 'id' | 'validUntil'>>,
  ): Promise<Pick<Grant, 'id' | 'validUntil'> | undefined> {
    return this.transactions.run(async (manager, scope) => {
      scope.afterCommit(() => this.exchangeChanges.forget(principal));
      await endFamiliesOfGrant(manager, principal, agentId, now);
      const [rows] = await manager.query<[GrantRow[], number]>(
        'DELETE FROM grants WHERE principal = $1 AND agent_id = $2 RETURNING id, valid_until',
        [principal, agentId],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      const deleted = { id: row.id, validUntil: row.valid_until };
      await within?.(deleted, manager);
      return deleted;
    });
  }

  /**
   * Removes delegations of expired grants that reference a service or permission set, so
   * only active grants block its deletion (409 while grants reference it).
   */
  async releaseExpiredReferences(
    reference: { serviceId: string } | { permissionSetId: string } | { resourceId: string },
    now: Date,
  ): Promise<void> {
    const [table, column, value] =
      'serviceId' in reference
        ? ['grant_delegations', 'service_id', reference.serviceId]
        : 'resourceId' in reference
          ? ['grant_resources', 'resource_id', reference.resourceId]
          : ['grant_delegations', 'permission_set_id', reference.permissionSetId];
    await this.dataSource.query(
      `DELETE FROM ${table} d USING grants g
        WHERE d.grant_id = g.id AND d.${column} = $1 AND NOT ${active(2)}`,
      [value, now],
    );
    // A permission set is referenced by both kinds of delegation.
    if ('permissionSetId' in reference) {
      await this.dataSource.query(
        `DELETE FROM grant_resources d USING grants g WHERE d.grant_id = g.id AND d.permission_set_id = $1 AND NOT ${active(2)}`,
        [value, now],
      );
    }
  }

  private async delegations(manager: EntityManager, grantIds: readonly string[]): Promise<Delegations> {
    const [services, resources] = await Promise.all([
      manager.query<DelegationRow[]>(
        'SELECT grant_id, permission_set_id, service_id, scopes FROM grant_delegations WHERE grant_id = ANY($1) ORDER BY position',
        [grantIds],
      ),
      manager.query<ResourceDelegationRow[]>(
        'SELECT grant_id, permission_set_id, resource_id, scopes FROM grant_resources WHERE grant_id = ANY($1) ORDER BY position',
        [grantIds],
      ),
    ]);
    return { services, resources };
  }
}

/**
 * A grant replaced narrower takes back what it no longer delegates: the refresh token
 * families of this grant with a resource or a scope the grant no longer delegates
 * (`familyDelegated`: a registered protected resource and its scopes, or a service's
 * protected resource) are ended in the grant's transaction (docs/oauth2.md "Consent per MCP
 * server"), atomically against a rotation in flight (`endFamilies`). The rotation checks the
 * same rule, so a family this misses can still not be used. Access tokens already issued
 * run to their expiry (`token_ttl`), as after any revocation of a grant.
 */
async function endFamiliesBeyond(manager: EntityManager, grantId: string, now: Date): Promise<void> {
  await endFamilies(
    manager,
    `SELECT r.family_id FROM refresh_tokens r JOIN refresh_token_families f ON f.id = r.family_id JOIN grants g ON g.id = r.grant_id
      WHERE r.grant_id = $2 AND r.revoked_at IS NULL AND NOT ${familyDelegated('r', 'f', 'g')}`,
    [grantId],
    now,
  );
}

/**
 * Before a grant of the person to the agent is deleted: its refresh token families are
 * ended first (`endFamilies`, atomic against a rotation in flight), and before the grant row
 * is locked, so the rotation and the deletion take their locks in the same order (family,
 * then grant) and never deadlock. Deleting the grant then deletes the tokens.
 */
async function endFamiliesOfGrant(
  manager: EntityManager,
  principal: string,
  agentId: string,
  now: Date,
): Promise<void> {
  await endFamilies(
    manager,
    'SELECT r.family_id FROM refresh_tokens r JOIN grants g ON g.id = r.grant_id WHERE g.principal = $2 AND g.agent_id = $3',
    [principal, agentId],
    now,
  );
}

function toGrant(row: GrantRow, delegations: Delegations): Grant {
  return {
    id: row.id,
    principal: row.principal,
    agentId: row.agent_id,
    validUntil: row.valid_until,
    delegations: delegations.services
      .filter((d) => d.grant_id === row.id)
      .map((d) => ({ permissionSetId: d.permission_set_id, serviceId: d.service_id, scopes: d.scopes })),
    resourceDelegations: delegations.resources
      .filter((d) => d.grant_id === row.id)
      .map((d) => ({ permissionSetId: d.permission_set_id, resourceId: d.resource_id, scopes: d.scopes })),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
