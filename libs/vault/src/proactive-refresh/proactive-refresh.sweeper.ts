import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { BackgroundJob, Clock, type HasBackgroundJob } from '@broker/domain';
import { SessionRepository, type ClaimedSession } from '@broker/persistence';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { TokenVault, TokenVaultError } from '../token-vault';
import { ServiceBackoff, type BackoffChange } from './service-backoff';

/** The shortest claim lease: a claimed session stays with its sweeper at least this long. */
export const MIN_LEASE_MS = 60_000;

/** What one sweep did, by session. */
export interface SweepSummary {
  claimed: number;
  /** Refreshed by this sweep (the provider answered, the new tokens are stored). */
  refreshed: number;
  /** Not refreshed by this sweep: refreshed by another caller meanwhile, no longer due, deleted, or no refresh token. */
  unchanged: number;
  /** The provider refused the refresh token (`invalid_grant`): the session is now marked. */
  reauthentication_required: number;
  /** Provider outage or another failure: retried after the lease (and the service's back-off). */
  failed: number;
  /** Left for a later sweep: the service is backing off, or the process is shutting down. */
  skipped: number;
}

type ProactiveSettings = BrokerConfig['token_refresh']['proactive'];

function emptySummary(): SweepSummary {
  return { claimed: 0, refreshed: 0, unchanged: 0, reauthentication_required: 0, failed: 0, skipped: 0 };
}

/**
 * Refreshes third-party access tokens before they expire, so the token
 * exchange does not pay the provider's round trip. Every `interval` (a `BackgroundJob`:
 * sweeps never overlap) a sweep claims up to `batch_size` due sessions with a lease
 * (`SessionRepository.claimDueForRefresh`: `FOR UPDATE SKIP LOCKED`, so replicas and cluster
 * workers share the work; the same statement on PGlite) and refreshes them through
 * `TokenVault.refreshAhead`, at most `concurrency` at once: the exchange's single flight and
 * refresh lock, re-checked under the lock, so a sweep and an exchange (or two sweeping
 * processes) never refresh one session twice. `invalid_grant` marks the session for
 * re-authentication (the vault does, as for an exchange; the claim skips marked sessions,
 * so it is not retried). A provider outage (`refresh_failed`) backs the service off
 * (`ServiceBackoff`: interval × 2^n up to 30 minutes, reset on success), and a failed
 * session keeps its lease (max(2 × interval, 60 s)), so no replica retries it sooner.
 *
 * One sweeper per process: both servers build `VaultModule`, and only the end-user
 * server's job runner starts its instance, because its `TokenVault` is the exchange's (one
 * single flight). A process running only the admin server does not sweep: the end-user
 * servers, where exchanges happen, do. At shutdown no new sweep starts, queued sessions are
 * abandoned (their lease lapses) and refreshes in flight finish before the database closes.
 */
@Injectable()
export class ProactiveRefreshSweeper implements HasBackgroundJob {
  // Nest's Logger (as TokenVault): structured fields first, then the message; it follows the process's current logger.
  private readonly logger = new Logger(ProactiveRefreshSweeper.name);
  private readonly settings: ProactiveSettings;
  private readonly leaseMs: number;
  private readonly backoff: ServiceBackoff;
  readonly job: BackgroundJob<SweepSummary>;
  /** Every sweep's counts added up since start (what this process's sweeps did; tests and diagnostics read it). */
  readonly totals: SweepSummary = emptySummary();

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly sessions: SessionRepository,
    private readonly vault: TokenVault,
    private readonly clock: Clock,
  ) {
    this.settings = config.token_refresh.proactive;
    this.leaseMs = Math.max(2 * this.settings.interval, MIN_LEASE_MS);
    this.backoff = new ServiceBackoff(this.settings.interval);
    this.job = new BackgroundJob({
      name: ProactiveRefreshSweeper.name,
      enabled: this.settings.enabled,
      intervalMs: this.settings.interval,
      failure: 'proactive refresh: a sweep failed; the next sweep retries',
      onStart: () => this.announceStart(),
      run: () => this.sweep(),
    });
  }

  private announceStart(): void {
    this.logger.log(
      {
        window_ms: this.settings.window,
        interval_ms: this.settings.interval,
        batch_size: this.settings.batch_size,
        concurrency: this.settings.concurrency,
      },
      'proactive refresh: sweeping',
    );
  }

  /** True when this instance sweeps on its timer: enabled, and started by the end-user server's job runner. */
  get sweeping(): boolean {
    return this.job.started;
  }

  /** No further sweeps; waits for the refreshes in flight (queued ones are abandoned). */
  stop(): Promise<void> {
    return this.job.stop();
  }

  /** Sweeps now, after the sweep in progress if any (sweeps never overlap). Never rejects. */
  sweepNow(): Promise<SweepSummary> {
    return this.job.runNow();
  }

  private async sweep(): Promise<SweepSummary> {
    const summary = emptySummary();
    if (this.job.stopping) return summary;
    const now = this.clock.now();
    let claimed: ClaimedSession[];
    try {
      claimed = await this.sessions.claimDueForRefresh({
        now,
        horizon: new Date(now.getTime() + this.settings.window),
        leaseUntil: new Date(now.getTime() + this.leaseMs),
        limit: this.settings.batch_size,
        skipServiceIds: this.backoff.blocked(now.getTime()),
      });
    } catch (error) {
      // The message only: a query error object carries the statement's parameters.
      this.logger.warn(
        { error: (error as Error).message },
        'proactive refresh: claiming due sessions failed; the next sweep retries',
      );
      return summary;
    }
    summary.claimed = claimed.length;
    const queue = [...claimed];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await this.refreshOne(next, summary);
    };
    await Promise.all(Array.from({ length: Math.min(this.settings.concurrency, queue.length) }, worker));
    if (summary.claimed === 0) return summary;
    for (const key of Object.keys(summary) as (keyof SweepSummary)[]) this.totals[key] += summary[key];
    this.logger.log({ ...summary }, 'proactive refresh: sweep done');
    return summary;
  }

  private async refreshOne(session: ClaimedSession, summary: SweepSummary): Promise<void> {
    if (this.job.stopping || this.backoff.isBlocked(session.serviceId, this.clock.nowMs())) {
      summary.skipped += 1;
      return;
    }
    try {
      if (await this.vault.refreshAhead(session.principal, session.serviceId, session.version, this.settings.window)) {
        summary.refreshed += 1;
        this.announce(this.backoff.succeeded(session.serviceId));
      } else {
        summary.unchanged += 1;
      }
    } catch (error) {
      if (!(error instanceof TokenVaultError)) {
        summary.failed += 1;
        this.logger.warn(
          { service_id: session.serviceId, error: (error as Error).message },
          'proactive refresh: refreshing a session failed',
        );
        return;
      }
      switch (error.code) {
        case 'refresh_failed':
          summary.failed += 1;
          this.announce(this.backoff.failed(session.serviceId, this.clock.nowMs()));
          return;
        case 'reauthentication_required':
          summary.reauthentication_required += 1;
          return;
        case 'no_session':
        case 'refresh_unavailable':
          summary.unchanged += 1;
          return;
      }
    }
  }

  /** One log line per back-off change: the service id only. */
  private announce(change: BackoffChange | undefined): void {
    if (change === undefined) return;
    if (change.kind === 'backing_off') {
      this.logger.warn(
        { service_id: change.serviceId, backoff_ms: change.delayMs, failures: change.failures },
        'proactive refresh: the provider is failing; backing off the service',
      );
    } else {
      this.logger.log(
        { service_id: change.serviceId },
        'proactive refresh: the provider answered again; back-off reset',
      );
    }
  }
}
