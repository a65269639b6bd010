import { HealthService } from '@broker/bootstrap';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { EventRepository, RegistryCountsRepository } from '@broker/persistence';
import { SigningKeyService } from '@broker/oauth-server';
import { Inject, Injectable } from '@nestjs/common';
import { toEventResponse } from '../events/event.response';
import { ageDays, overviewWarnings } from './overview-warnings';
import type { OverviewResponse } from './overview.response';

/** Administrators' actions shown on the overview. */
export const RECENT_ADMIN_ACTIONS = 10;

/** The admin console's first page in one answer: health, mode, counts, keys, warnings, recent admin actions. */
@Injectable()
export class OverviewService {
  /** In proxy mode the upstream authorization server signs: the broker's own keys are not in use. */
  private readonly signs: boolean;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly health: HealthService,
    private readonly counts: RegistryCountsRepository,
    private readonly keys: SigningKeyService,
    private readonly events: EventRepository,
    private readonly clock: Clock,
  ) {
    this.signs = config.oauth2_authorization_server.mode !== 'proxy';
  }

  async overview(): Promise<OverviewResponse> {
    const now = this.clock.now();
    const [report, counts, keys, recent] = await Promise.all([
      this.health.report(),
      this.counts.counts(now),
      this.signs ? this.keys.list() : Promise.resolve([]),
      this.events.page({ actorType: 'admin' }, RECENT_ADMIN_ACTIONS),
    ]);
    const live = keys.filter((key) => key.deletedAt === null);
    const current = live.find((key) => key.isCurrent);
    return {
      mode: this.config.oauth2_authorization_server.mode,
      status: report.status,
      counts: {
        agents: counts.agents,
        suspended_agents: counts.suspendedAgents,
        services: counts.services,
        resources: counts.resources,
        permission_sets: counts.permissionSets,
        active_grants: counts.activeGrants,
        pending_approvals: counts.pendingApprovals,
      },
      signing_keys: live.map((key) => ({
        kid: key.kid,
        algorithm: key.algorithm,
        is_current: key.isCurrent,
        created_at: key.createdAt.toISOString(),
        age_days: ageDays(key.createdAt, now),
      })),
      warnings: overviewWarnings(this.config, current, now),
      recent_admin_actions: recent.events.map(toEventResponse),
    };
  }
}
