import { BROKER_CONFIG, ConfigError, type BrokerConfig } from '@broker/config';
import { ApprovalError, type SyncedApproval, type SyncFilter, type SyncSnapshot } from '@broker/domain';
import { ApprovalChangeFeed, ApprovalRepository } from '@broker/persistence';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { ExpirySweeper } from './expiry-sweeper';
import { LongPollHub } from './long-poll-hub';

/** `X-Long-Poll-Timeout` is an integer from 1 to 120 (seconds). */
export const MIN_LONG_POLL_SECONDS = 1;
export const MAX_LONG_POLL_SECONDS = 120;
const MAX_AGENT_SESSION_IDS = 100;

/** A gateway's sync request (docs/approvals.md), its client assertion already verified and authorized (`ApprovalGatewayAuth.forSync`). */
export interface SyncRequest {
  /** undefined: every principal. */
  readonly principal: string | undefined;
  readonly agentSessionIds: readonly string[];
  readonly ifNoneMatch: string | undefined;
  /** The raw `X-Long-Poll-Timeout` header. */
  readonly longPollTimeout: string | undefined;
  /** Aborted when the client goes away: its waiter is freed at once. */
  readonly signal: AbortSignal;
}

/** One (principal, agent) pair of the sync state. */
export interface ApprovalPair {
  readonly principal: string;
  readonly agentId: string;
  readonly approvals: readonly SyncedApproval[];
}

/** The answer: the state (200), not modified (304; `closing` during shutdown), or nobody left to answer. */
export type SyncAnswer =
  | { readonly kind: 'state'; readonly version: number; readonly pairs: readonly ApprovalPair[] }
  | { readonly kind: 'not_modified'; readonly version: number; readonly closing: boolean }
  | { readonly kind: 'aborted' };

/** The sync ETag of a version: `"v<N>"`. */
export function etagOf(version: number): string {
  return `"v${version}"`;
}

/** RFC 9110 §13.1.2: `If-None-Match` is `*` or a list of (weak or strong) tags, compared weakly. */
export function ifNoneMatchHolds(header: string | undefined, version: number): boolean {
  if (header === undefined) return false;
  const current = etagOf(version);
  return header.split(',').some((raw) => {
    const tag = raw.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === current;
  });
}

/** `X-Long-Poll-Timeout` in seconds: an integer 1-120, else 400 `bad request`; absent: the configured default. */
export function parseLongPollTimeout(raw: string | undefined, defaultSeconds: number): number {
  if (raw === undefined) return defaultSeconds;
  const value = raw.trim();
  const seconds = /^[0-9]{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(seconds >= MIN_LONG_POLL_SECONDS && seconds <= MAX_LONG_POLL_SECONDS)) {
    const problem = `must be an integer from ${MIN_LONG_POLL_SECONDS} to ${MAX_LONG_POLL_SECONDS} (seconds)`;
    throw new ApprovalError('invalid_input', `X-Long-Poll-Timeout ${problem}`, [
      { field: 'X-Long-Poll-Timeout', problem },
    ]);
  }
  return seconds;
}

function pairsOf(approvals: readonly SyncedApproval[]): ApprovalPair[] {
  const pairs: { principal: string; agentId: string; approvals: SyncedApproval[] }[] = [];
  for (const approval of approvals) {
    const last = pairs[pairs.length - 1];
    if (last !== undefined && last.principal === approval.principal && last.agentId === approval.agentId)
      last.approvals.push(approval);
    else pairs.push({ principal: approval.principal, agentId: approval.agentId, approvals: [approval] });
  }
  return pairs;
}

/**
 * Gateways' long-poll sync (docs/approvals.md). The version is the database counter the
 * approvals triggers bump with every change; `If-None-Match` equal to it holds the request
 * in the `LongPollHub` until a change is announced (this process's LISTEN connection, or
 * PGlite's listen()) or `X-Long-Poll-Timeout` passes (304). Woken waiters with the same
 * filter share one read. This service owns the process's change feed: it starts it with the
 * end-user server and stops it with it.
 */
@Injectable()
export class ApprovalSync implements OnModuleInit, OnModuleDestroy {
  private readonly defaultTimeoutSeconds: number;
  private readonly reads = new Map<string, Promise<SyncSnapshot>>();

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly approvals: ApprovalRepository,
    private readonly feed: ApprovalChangeFeed,
    private readonly hub: LongPollHub,
    private readonly sweeper: ExpirySweeper,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('approvals');
    const seconds = config.approvals.sync.default_timeout / 1000;
    if (!Number.isInteger(seconds) || seconds < MIN_LONG_POLL_SECONDS || seconds > MAX_LONG_POLL_SECONDS) {
      throw new ConfigError(
        'approvals.sync.default_timeout',
        `must be a whole number of seconds from ${MIN_LONG_POLL_SECONDS}s to ${MAX_LONG_POLL_SECONDS}s (the X-Long-Poll-Timeout range)`,
      );
    }
    this.defaultTimeoutSeconds = seconds;
  }

  async onModuleInit(): Promise<void> {
    await this.feed.start({
      changed: (version) => {
        this.hub.changed(version);
        this.sweeper.changed();
      },
      resync: () => {
        this.logger.info('approvals: change notifications resumed; every held sync re-reads');
        this.hub.resync();
        this.sweeper.changed();
      },
      lost: (error) => {
        this.logger.warn({ err: error }, 'approvals: the change notification connection failed; reconnecting');
        this.hub.feedLost();
      },
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.hub.shutdown();
    await this.feed.stop();
  }

  /** Answers every held sync now (304, connection closing): shutdown must not wait for them. */
  releaseWaiters(): void {
    this.hub.shutdown();
  }

  /**
   * The sync state for the filter. No or a stale `If-None-Match`: at once. Equal to the
   * current version: when a change is announced (200 with the new state), else after the
   * timeout (304). A wake-up that turns out not to change the version keeps waiting.
   */
  async sync(request: SyncRequest): Promise<SyncAnswer> {
    const timeoutMs = parseLongPollTimeout(request.longPollTimeout, this.defaultTimeoutSeconds) * 1000;
    const filter = this.filterOf(request);
    const deadline = performance.now() + timeoutMs;
    let snapshot = await this.read(filter);
    if (!ifNoneMatchHolds(request.ifNoneMatch, snapshot.version)) return this.state(snapshot);
    for (;;) {
      const outcome = await this.hub.wait(snapshot.version, deadline - performance.now(), request.signal);
      switch (outcome) {
        case 'aborted':
          return { kind: 'aborted' };
        case 'shutdown':
          return { kind: 'not_modified', version: snapshot.version, closing: true };
        case 'timeout':
          return { kind: 'not_modified', version: snapshot.version, closing: false };
        case 'changed':
        case 'recheck': {
          if (request.signal.aborted) return { kind: 'aborted' };
          const next = await this.read(filter);
          if (next.version !== snapshot.version) return this.state(next);
          snapshot = next;
          if (outcome === 'recheck' || deadline - performance.now() <= 0)
            return { kind: 'not_modified', version: snapshot.version, closing: false };
          break;
        }
      }
    }
  }

  private state(snapshot: SyncSnapshot): SyncAnswer {
    return { kind: 'state', version: snapshot.version, pairs: pairsOf(snapshot.approvals) };
  }

  private filterOf(request: SyncRequest): SyncFilter {
    if (request.principal !== undefined && (request.principal.trim() === '' || request.principal.length > 200)) {
      throw new ApprovalError('invalid_input', 'principal must be 1-200 characters', [
        { field: 'principal', problem: 'must be 1-200 characters' },
      ]);
    }
    const ids = [...new Set(request.agentSessionIds)].sort();
    if (ids.length > MAX_AGENT_SESSION_IDS)
      throw new ApprovalError('invalid_input', `at most ${MAX_AGENT_SESSION_IDS} agent_session_id values are allowed`, [
        { field: 'agent_session_id', problem: `at most ${MAX_AGENT_SESSION_IDS} values` },
      ]);
    return { principal: request.principal?.trim(), agentSessionIds: ids };
  }

  /**
   * Sweeps due expiries first, then reads the state. Requests with the same filter that
   * start after the same announcement share one read, so a change that wakes thousands of
   * waiters costs one query per distinct filter, and every read sees the announced change.
   */
  private async read(filter: SyncFilter): Promise<SyncSnapshot> {
    await this.sweeper.sweepIfDue();
    const announced = this.hub.latestVersion;
    const key = JSON.stringify([announced, filter.principal ?? null, filter.agentSessionIds]);
    let pending = this.reads.get(key);
    if (pending === undefined) {
      pending = this.approvals.syncSnapshot(filter).finally(() => this.reads.delete(key));
      this.reads.set(key, pending);
    }
    const snapshot = await pending;
    this.hub.observed(snapshot.version, announced);
    return snapshot;
  }
}
