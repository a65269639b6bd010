import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { active } from './grant.repository';

/** How much the broker holds, for the admin overview. */
export interface RegistryCounts {
  readonly agents: number;
  readonly suspendedAgents: number;
  readonly services: number;
  readonly resources: number;
  readonly permissionSets: number;
  /** Grants whose `valid_until` has not passed (the one "grant is active" rule). */
  readonly activeGrants: number;
  /** Tool approvals waiting for a person's decision and not yet past their expiry. */
  readonly pendingApprovals: number;
}

interface CountsRow {
  agents: number;
  suspended_agents: number;
  services: number;
  resources: number;
  permission_sets: number;
  active_grants: number;
  pending_approvals: number;
}

/**
 * The registry's sizes in one statement. Each count is a scan of its table (the registry's
 * tables are small; grants and approvals read their primary keys or partial indexes), so it
 * serves an admin page, never a hot path.
 */
@Injectable()
export class RegistryCountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async counts(now: Date): Promise<RegistryCounts> {
    const [row] = await this.dataSource.query<CountsRow[]>(
      `SELECT (SELECT count(*)::int FROM agents) AS agents,
              (SELECT count(*)::int FROM agents WHERE suspended_at IS NOT NULL) AS suspended_agents,
              (SELECT count(*)::int FROM services) AS services,
              (SELECT count(*)::int FROM protected_resources) AS resources,
              (SELECT count(*)::int FROM permission_sets) AS permission_sets,
              (SELECT count(*)::int FROM grants g WHERE ${active(1)}) AS active_grants,
              (SELECT count(*)::int FROM approvals
                WHERE status = 'pending' AND (expires_at IS NULL OR expires_at > $1)) AS pending_approvals`,
      [now],
    );
    return {
      agents: row?.agents ?? 0,
      suspendedAgents: row?.suspended_agents ?? 0,
      services: row?.services ?? 0,
      resources: row?.resources ?? 0,
      permissionSets: row?.permission_sets ?? 0,
      activeGrants: row?.active_grants ?? 0,
      pendingApprovals: row?.pending_approvals ?? 0,
    };
  }
}
