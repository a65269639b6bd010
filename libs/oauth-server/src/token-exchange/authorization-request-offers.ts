import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, Random, withMembers, type OAuthError } from '@broker/domain';
import {
  AuthorizationRequestRepository,
  scopeKey,
  type AuthorizationRequestLimits,
  type AuthorizationRequestRecord,
  type OfferedPermissionSet,
} from '@broker/persistence';
import { authorizationRequestEvent, EventLedger } from '@broker/events';
import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';

/** The `authorization_request` member of a refused exchange (docs/authorization-requests.md). */
export interface AuthorizationRequestMember {
  readonly id: string;
  readonly url: string;
  readonly expires_at: string;
  readonly expires_in: number;
}

const BROKER = { type: 'broker', id: null } as const;

/** A refusal of steps 5-6 for an authenticated gateway, and what the person could do about it. */
export interface OfferableRefusal {
  readonly error: OAuthError;
  readonly principal: string;
  readonly agentId: string;
  readonly serviceId: string;
  readonly requestedScopes: readonly string[];
  readonly needsGrant: boolean;
  readonly needsConnection: boolean;
  /** The gateway's client assertion `sub`. */
  readonly gateway: string | null;
  /** The agent's permission sets naming the service, when the caller already read them. */
  readonly offered?: readonly OfferedPermissionSet[];
}

/**
 * Turns a token exchange's refusal into a link the person can act on: finds or creates the
 * pending authorization request of (principal, agent, service, requested scopes) and adds
 * it to the refusal as `authorization_request`. Runs only on a refusal; the exchange's
 * success path never reaches it. Identical refusals arriving together share one database
 * round trip (single flight per key). A refusal for which nobody could allow anything (no
 * permission set of the agent names the service), a limit reached, the feature off, or a
 * failure of the store: the refusal unchanged.
 */
@Injectable()
export class AuthorizationRequestOffers {
  private readonly enabled: boolean;
  private readonly expiryMs: number;
  private readonly limits: AuthorizationRequestLimits;
  private readonly publicUrl: string;
  private readonly inFlight = new Map<string, Promise<AuthorizationRequestRecord | undefined>>();

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly requests: AuthorizationRequestRepository,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly events: EventLedger,
    private readonly logger: PinoLogger,
  ) {
    const settings = config.authorization_requests;
    this.enabled = settings.enabled;
    this.expiryMs = settings.expiry;
    this.limits = {
      maxPendingPerPrincipal: settings.rate_limit.max_pending_per_principal,
      maxRequestsPerMinute: settings.rate_limit.max_requests_per_minute,
    };
    this.publicUrl = config.server.enduser.public_url;
    logger.setContext('authorization-requests');
  }

  /** Whether refusals carry links at all (`authorization_requests.enabled`). */
  get active(): boolean {
    return this.enabled;
  }

  /** The agent's permission sets naming the service (read only on a refusal path). */
  offeredPermissionSets(agentId: string, serviceId: string): Promise<OfferedPermissionSet[]> {
    return this.requests.offeredPermissionSets(agentId, serviceId);
  }

  /** The refusal with its `authorization_request` member, or unchanged. Never throws. */
  async offer(refusal: OfferableRefusal): Promise<OAuthError> {
    if (!this.enabled) return refusal.error;
    try {
      const record = await this.requestFor(refusal);
      return record === undefined
        ? refusal.error
        : withMembers(refusal.error, { authorization_request: this.member(record) });
    } catch (error) {
      this.logger.warn({ err: error }, 'authorization request could not be created; the refusal carries no link');
      return refusal.error;
    }
  }

  /** The link of a request: `<public_url>/authorization-requests/<id>`. */
  url(id: string): string {
    return `${this.publicUrl}/authorization-requests/${id}`;
  }

  private member(record: AuthorizationRequestRecord): AuthorizationRequestMember {
    const remainingMs = record.expiresAt.getTime() - this.clock.nowMs();
    return {
      id: record.id,
      url: this.url(record.id),
      expires_at: record.expiresAt.toISOString(),
      expires_in: Math.max(0, Math.floor(remainingMs / 1000)),
    };
  }

  private requestFor(refusal: OfferableRefusal): Promise<AuthorizationRequestRecord | undefined> {
    const scopes = scopeKey(refusal.requestedScopes);
    const key = JSON.stringify([refusal.principal, refusal.agentId, refusal.serviceId, scopes]);
    let pending = this.inFlight.get(key);
    if (pending === undefined) {
      pending = this.create(refusal).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async create(refusal: OfferableRefusal): Promise<AuthorizationRequestRecord | undefined> {
    const offered = refusal.offered ?? (await this.offeredPermissionSets(refusal.agentId, refusal.serviceId));
    // Nothing a person could allow: no link.
    if (offered.length === 0) return undefined;
    const now = this.clock.now();
    const outcome = await this.requests.create(
      {
        id: this.random.uuid(),
        principal: refusal.principal,
        agentId: refusal.agentId,
        serviceId: refusal.serviceId,
        scopes: refusal.requestedScopes,
        permissionSetIds: offered.map((set) => set.permissionSetId),
        needsGrant: refusal.needsGrant,
        needsConnection: refusal.needsConnection,
        expiresAt: new Date(now.getTime() + this.expiryMs),
        createdBy: refusal.gateway,
      },
      this.limits,
      now,
    );
    // Queued like the exchange's own event: the refusal never waits for the ledger.
    for (const stale of outcome.expired)
      this.events.enqueue(authorizationRequestEvent('authorization_request.expired', stale, BROKER, null));
    if (outcome.kind === 'rate_limited') return undefined;
    if (outcome.kind === 'created')
      this.events.enqueue(
        authorizationRequestEvent(
          'authorization_request.created',
          outcome.record,
          { type: 'gateway', id: refusal.gateway },
          null,
        ),
      );
    return outcome.record;
  }
}
