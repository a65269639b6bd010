import type { GrantDelegation } from '@broker/domain';
import { Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { preparedQuery } from '../prepared-query';
import { ExchangeContextCache, type ExchangeContext } from './exchange-context-cache';
import { active } from './grant.repository';
import { toRecord, type SessionRow } from './session.repository';

export type { ExchangeContext } from './exchange-context-cache';

type ContextRow = Partial<SessionRow> & {
  owner_service_id: string;
  permission_set_id: string | null;
  delegation_scopes: string[] | null;
  grant_valid_until: Date | null;
  agent_suspended: boolean;
};

/**
 * The token exchange's database work in one round trip (docs/oauth2.md, "Token
 * exchange for gateways", steps 4-6): the service
 * owning the resource (primary key), the active grant's delegations for it (unique
 * (principal, agent) then the delegation primary key) and the session (unique
 * (principal, service)), each joined on an index; the grant is active by `active` (compared
 * in SQL with the caller's clock); and whether the agent is suspended (its primary key: docs/admin-api.md
 * "Suspending an agent"). One row per delegation, the session repeated on each. Prepared once per
 * connection (`preparedQuery`). On PostgreSQL a complete context is then kept in memory
 * (`ExchangeContextCache`) until a notification says one of its rows changed.
 */
const SQL = `SELECT r.service_id AS owner_service_id, d.permission_set_id, d.scopes AS delegation_scopes, g.valid_until AS grant_valid_until,
       ag.suspended_at IS NOT NULL AS agent_suspended, s.*
  FROM service_protected_resources r
  LEFT JOIN agents ag ON ag.id = $3
  LEFT JOIN (grants g JOIN grant_delegations d ON d.grant_id = g.id)
         ON d.service_id = r.service_id AND g.principal = $2 AND g.agent_id = $3 AND ${active(4)}
  LEFT JOIN third_party_sessions s ON s.principal = $2 AND s.service_id = r.service_id
 WHERE r.uri = $1
 ORDER BY d.position`;

@Injectable()
export class ExchangeLookup {
  private readonly query: (values: readonly unknown[]) => Promise<ContextRow[]>;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    /** The process's context cache; none on PGlite (no notification connection). */
    @Optional() private readonly cache?: ExchangeContextCache,
  ) {
    this.query = preparedQuery<ContextRow>(dataSource, 'broker_exchange_lookup', SQL);
  }

  /** Undefined when no service owns `resource` (normal form). */
  contextFor(resource: string, principal: string, agentId: string, now: Date): Promise<ExchangeContext | undefined> {
    if (this.cache === undefined) return this.read(resource, principal, agentId, now).then((found) => found?.context);
    return this.cache.read(resource, principal, agentId, now.getTime(), () =>
      this.read(resource, principal, agentId, now),
    );
  }

  private async read(
    resource: string,
    principal: string,
    agentId: string,
    now: Date,
  ): Promise<{ context: ExchangeContext; grantValidUntil: Date | null } | undefined> {
    const rows = await this.query([resource, principal, agentId, now]);
    const first = rows[0];
    if (first === undefined) return undefined;
    const delegations: GrantDelegation[] = [];
    for (const row of rows)
      if (row.permission_set_id !== null && row.delegation_scopes !== null)
        delegations.push({
          permissionSetId: row.permission_set_id,
          serviceId: row.owner_service_id,
          scopes: row.delegation_scopes,
        });
    const session = typeof first.id === 'string' ? toRecord(first as SessionRow) : undefined;
    return {
      context: { serviceId: first.owner_service_id, delegations, session, agentSuspended: first.agent_suspended },
      grantValidUntil: first.grant_valid_until,
    };
  }
}
