import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { BackgroundJob, Clock, type HasBackgroundJob, type JobRun } from '@broker/domain';
import { authorizationRequestEvent, EventLedger, recordChange } from '@broker/events';
import { AuthorizationRequestRepository, type AuthorizationRequestRecord } from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';

const EVERY_MS = 30_000;
const BATCH = 500;
const BROKER = { type: 'broker', id: null } as const;

/**
 * Ends the authorization requests nobody answered before their expiry, with their
 * `authorization_request.expired` event (docs/authorization-requests.md), every 30 seconds.
 * A request read or waited on past its expiry is ended at that moment already; this job
 * ends the ones nobody looks at. Each replica runs it: a batch skips the rows another holds,
 * and the update is conditional, so a request ends (and its event is recorded) once.
 */
@Injectable()
export class AuthorizationRequestExpiry implements HasBackgroundJob {
  readonly job: BackgroundJob<number>;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly requests: AuthorizationRequestRepository,
    private readonly events: EventLedger,
    private readonly clock: Clock,
  ) {
    this.job = new BackgroundJob({
      name: AuthorizationRequestExpiry.name,
      enabled: config.authorization_requests.enabled,
      intervalMs: EVERY_MS,
      failure: 'authorization requests: ending expired requests failed; the next run retries',
      run: (job) => this.sweep(job),
    });
  }

  /** Ends every due request now (after a sweep in progress); how many ended. */
  sweepNow(): Promise<number> {
    return this.job.runNow();
  }

  private async sweep(job: JobRun): Promise<number> {
    const events = recordChange<AuthorizationRequestRecord>(this.events, (record) =>
      authorizationRequestEvent('authorization_request.expired', record, BROKER, null),
    );
    let ended = 0;
    for (;;) {
      const batch = await this.requests.expireDue(this.clock.now(), BATCH, events);
      ended += batch.length;
      if (batch.length < BATCH || job.stopping) return ended;
    }
  }
}
