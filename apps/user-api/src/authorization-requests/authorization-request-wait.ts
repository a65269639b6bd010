import { LongPollHub, parseLongPollTimeout } from '@broker/approvals';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ApiError, Clock, isUuidShaped } from '@broker/domain';
import { authorizationRequestEvent, EventLedger, recordChange } from '@broker/events';
import {
  AuthorizationRequestRepository,
  type AuthorizationRequestRecord,
  type AuthorizationRequestStatus,
} from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';

/** A gateway's wait on one request (its credentials already verified by the guard). */
export interface WaitRequest {
  readonly id: string;
  readonly ifNoneMatch: string | undefined;
  /** The raw `X-Long-Poll-Timeout` header. */
  readonly longPollTimeout: string | undefined;
  /** Aborted when the gateway goes away: its waiter is freed at once. */
  readonly signal: AbortSignal;
}

/** The state (200), still pending at the timeout (304; `closing` during shutdown), or nobody left to answer. */
export type WaitAnswer =
  | { readonly kind: 'state'; readonly record: AuthorizationRequestRecord }
  | { readonly kind: 'not_modified'; readonly status: AuthorizationRequestStatus; readonly closing: boolean }
  | { readonly kind: 'aborted' };

/** The ETag of a state: its status, quoted (`"pending"`). */
export function statusEtag(status: string): string {
  return `"${status}"`;
}

/** RFC 9110 §13.1.2: `If-None-Match` names the current status (`*`, a list, weak tags compare weakly). */
function ifNoneMatchHolds(header: string | undefined, status: string): boolean {
  if (header === undefined) return false;
  const current = statusEtag(status);
  return header.split(',').some((raw) => {
    const tag = raw.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === current;
  });
}

const BROKER = { type: 'broker', id: null } as const;

/**
 * The gateway's long-poll on one authorization request (docs/authorization-requests.md),
 * on the approvals' machinery: the request's table bumps the approvals' sync counter, so
 * the `LongPollHub` (fed by the approvals change feed on every replica) wakes this waiter
 * on any change, and it re-reads its one request by primary key. A request reaching its
 * expiry while held is ended at that moment and answered `expired`.
 */
@Injectable()
export class AuthorizationRequestWait {
  private readonly defaultTimeoutSeconds: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly requests: AuthorizationRequestRepository,
    private readonly hub: LongPollHub,
    private readonly events: EventLedger,
    private readonly clock: Clock,
  ) {
    // Checked to be whole seconds in range at boot by the approvals sync.
    this.defaultTimeoutSeconds = config.approvals.sync.default_timeout / 1000;
  }

  async wait(request: WaitRequest): Promise<WaitAnswer> {
    if (!isUuidShaped(request.id)) throw new ApiError('bad request', 'the authorization request id must be a UUID');
    const timeoutMs = parseLongPollTimeout(request.longPollTimeout, this.defaultTimeoutSeconds) * 1000;
    const deadline = performance.now() + timeoutMs;
    const id = request.id.toLowerCase();
    for (;;) {
      const announced = this.hub.latestVersion;
      const { version, record } = await this.requests.state(id);
      // A counter below the announced one (a restored database): the database wins (see LongPollHub.observed).
      this.hub.observed(version, announced);
      if (record === undefined) throw new ApiError('not_found', 'no such authorization request');
      const current = record.status === 'pending' ? await this.expiredIfDue(record) : record;
      if (!ifNoneMatchHolds(request.ifNoneMatch, current.status)) return { kind: 'state', record: current };
      // An answered or expired request never changes again: the gateway already holds its state.
      if (current.status !== 'pending') return { kind: 'not_modified', status: current.status, closing: false };
      const untilExpiry = current.expiresAt.getTime() - this.clock.nowMs();
      const remaining = deadline - performance.now();
      if (remaining <= 0) return { kind: 'not_modified', status: 'pending', closing: false };
      const outcome = await this.hub.wait(version, Math.min(remaining, untilExpiry), request.signal);
      switch (outcome) {
        case 'aborted':
          return { kind: 'aborted' };
        case 'shutdown':
          return { kind: 'not_modified', status: 'pending', closing: true };
        case 'timeout':
          // The long-poll's end, unless the request expired first (re-read: it is answered `expired`).
          if (untilExpiry < remaining) continue;
          return { kind: 'not_modified', status: 'pending', closing: false };
        case 'changed':
        case 'recheck':
          if (request.signal.aborted) return { kind: 'aborted' };
          continue;
      }
    }
  }

  /** A pending request past its expiry ends now (the change wakes every other waiter too). */
  private async expiredIfDue(record: AuthorizationRequestRecord): Promise<AuthorizationRequestRecord> {
    if (record.expiresAt.getTime() > this.clock.nowMs()) return record;
    const events = recordChange<AuthorizationRequestRecord>(this.events, (expired) =>
      authorizationRequestEvent('authorization_request.expired', expired, BROKER, null),
    );
    return (await this.requests.expireIfDue(record.id, this.clock.now(), events)) ?? record;
  }
}
