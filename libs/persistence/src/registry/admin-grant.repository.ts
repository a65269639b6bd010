import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { active } from './grant.repository';

/** A delegated service or protected resource of a grant: the union of the scopes its permission sets delegate. */
export interface AdminGrantTarget {
  readonly id: string;
  readonly displayName: string;
  readonly scopes: readonly string[];
}

/** An active grant as administrators see it: whose, to which agent, what it delegates, until when. */
export interface AdminGrantView {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly agentDisplayName: string;
  readonly services: readonly AdminGrantTarget[];
  readonly resources: readonly AdminGrantTarget[];
  readonly permissionSets: readonly { readonly id: string; readonly name: string }[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
}

/** Which active grants an administrator asks for; every field optional, combined with AND. */
export interface AdminGrantFilter {
  readonly agentId?: string;
  readonly principal?: string;
  /** Grants delegating this third-party service. */
  readonly serviceId?: string;
}

interface GrantRow {
  id: string;
  principal: string;
  agent_id: string;
  display_name: string;
  created_at: Date;
  valid_until: Date | null;
}

interface DelegationRow {
  grant_id: string;
  permission_set_id: string;
  permission_set_name: string;
  target_id: string;
  target_name: string;
  scopes: string[];
}

/**
 * Grants across people, for administrators (docs/admin-api.md "Grants"): the person's own
 * reads take the owner (`GrantRepository`); these take none because an administrator sees
 * everyone's. Active grants only (the one rule, `active`). Revoking goes through
 * `GrantRepository.deleteActive`, as the person's own revocation does.
 */
@Injectable()
export class AdminGrantRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Active grants matching the filter, newest first (`created_at`, then id), at most `limit`. */
  async list(filter: AdminGrantFilter, now: Date, limit: number): Promise<AdminGrantView[]> {
    const values: unknown[] = [now];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    const where = [active(1)];
    if (filter.agentId !== undefined) where.push(`g.agent_id = ${param(filter.agentId)}`);
    if (filter.principal !== undefined) where.push(`g.principal = ${param(filter.principal)}`);
    if (filter.serviceId !== undefined)
      where.push(
        `EXISTS (SELECT 1 FROM grant_delegations d WHERE d.grant_id = g.id AND d.service_id = ${param(filter.serviceId)})`,
      );
    const rows = await this.dataSource.query<GrantRow[]>(
      `SELECT g.id, g.principal, g.agent_id, a.display_name, g.created_at, g.valid_until
         FROM grants g JOIN agents a ON a.id = g.agent_id
        WHERE ${where.join(' AND ')}
        ORDER BY g.created_at DESC, g.id DESC
        LIMIT ${param(limit)}`,
      values,
    );
    return this.withDelegations(rows);
  }

  /** The person whose active grant `grantId` to the agent is; undefined when it is none (unknown, another agent's, expired). */
  async activePrincipal(agentId: string, grantId: string, now: Date): Promise<string | undefined> {
    const rows = await this.dataSource.query<{ principal: string }[]>(
      `SELECT g.principal FROM grants g WHERE g.id = $1 AND g.agent_id = $2 AND ${active(3)}`,
      [grantId, agentId, now],
    );
    return rows[0]?.principal;
  }

  /** The people with an active grant to the agent (an incident's revocation of them all). */
  async activePrincipals(agentId: string, now: Date): Promise<string[]> {
    const rows = await this.dataSource.query<{ principal: string }[]>(
      `SELECT g.principal FROM grants g WHERE g.agent_id = $1 AND ${active(2)} ORDER BY g.created_at, g.id`,
      [agentId, now],
    );
    return rows.map((row) => row.principal);
  }

  private async withDelegations(rows: readonly GrantRow[]): Promise<AdminGrantView[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const [services, resources] = await Promise.all([
      this.dataSource.query<DelegationRow[]>(
        `SELECT d.grant_id, d.permission_set_id, p.name AS permission_set_name, d.service_id AS target_id,
                s.display_name AS target_name, d.scopes
           FROM grant_delegations d JOIN services s ON s.id = d.service_id JOIN permission_sets p ON p.id = d.permission_set_id
          WHERE d.grant_id = ANY($1) ORDER BY d.grant_id, d.position`,
        [ids],
      ),
      this.dataSource.query<DelegationRow[]>(
        `SELECT d.grant_id, d.permission_set_id, p.name AS permission_set_name, d.resource_id AS target_id,
                r.display_name AS target_name, d.scopes
           FROM grant_resources d JOIN protected_resources r ON r.id = d.resource_id JOIN permission_sets p ON p.id = d.permission_set_id
          WHERE d.grant_id = ANY($1) ORDER BY d.grant_id, d.position`,
        [ids],
      ),
    ]);
    return rows.map((row) => {
      const own = (list: readonly DelegationRow[]) => list.filter((d) => d.grant_id === row.id);
      const sets = new Map<string, string>();
      for (const d of [...own(services), ...own(resources)]) sets.set(d.permission_set_id, d.permission_set_name);
      return {
        id: row.id,
        principal: row.principal,
        agentId: row.agent_id,
        agentDisplayName: row.display_name,
        services: targets(own(services)),
        resources: targets(own(resources)),
        permissionSets: [...sets].map(([id, name]) => ({ id, name })),
        createdAt: row.created_at,
        expiresAt: row.valid_until,
      };
    });
  }
}

/** One entry per service or resource, its scopes the union over the permission sets delegating it, in their order. */
function targets(delegations: readonly DelegationRow[]): AdminGrantTarget[] {
  const byId = new Map<string, { displayName: string; scopes: Set<string> }>();
  for (const d of delegations) {
    const target = byId.get(d.target_id) ?? { displayName: d.target_name, scopes: new Set<string>() };
    for (const scope of d.scopes) target.scopes.add(scope);
    byId.set(d.target_id, target);
  }
  return [...byId].map(([id, target]) => ({ id, displayName: target.displayName, scopes: [...target.scopes] }));
}
