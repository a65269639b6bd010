import { ApiError, Clock, isUuidShaped, type Agent, type Principal, type Service } from '@broker/domain';
import { authorizationRequestEvent, authorizationRequestMisdirected, EventLedger, recordChange } from '@broker/events';
import {
  AgentRepository,
  AuthorizationRequestRepository,
  GrantRepository,
  PermissionSetRepository,
  ServiceRepository,
  SessionRepository,
  sessionUsable,
  type AuthorizationRequestRecord,
  type WithinTransaction,
} from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { described } from '../consent/consent.service';
import { parseValidUntil } from '../grants/grant-request';
import { GrantsService } from '../grants/grants.service';

/** Where the person is in a request (docs/authorization-requests.md). */
export type AuthorizationRequestStep = 'consent' | 'connect' | 'done';

/** A request as the person's page shows it. */
export interface AuthorizationRequestDetails {
  readonly record: AuthorizationRequestRecord;
  readonly step: AuthorizationRequestStep;
  readonly agent: Agent;
  readonly service: Service;
  /** What Allow delegates for the service, in words. */
  readonly scopes: readonly { scope: string; description: string }[];
  readonly grantExists: boolean;
  /** Seconds left by the broker's clock (0 once expired or answered past expiry). */
  readonly expiresIn: number;
}

const BROKER = { type: 'broker', id: null } as const;

function stepOf(record: AuthorizationRequestRecord): AuthorizationRequestStep {
  if (record.status !== 'pending') return 'done';
  return record.allowedAt === null ? 'consent' : 'connect';
}

/**
 * The person's side of authorization requests (docs/authorization-requests.md): read, Allow,
 * Deny. Only the person a request was made for can act on it; anyone else opening the link
 * changes nothing and is recorded once on the owner's activity (`misdirected`). Allow writes
 * the grant through the grants service (existing delegations plus the request's permission
 * sets for the service), so the grant's own events and rules apply.
 */
@Injectable()
export class AuthorizationRequestsService {
  constructor(
    private readonly requests: AuthorizationRequestRepository,
    private readonly agents: AgentRepository,
    private readonly services: ServiceRepository,
    private readonly permissionSets: PermissionSetRepository,
    private readonly grantsRepository: GrantRepository,
    private readonly sessions: SessionRepository,
    private readonly grants: GrantsService,
    private readonly events: EventLedger,
    private readonly clock: Clock,
  ) {}

  /** The request in any state (404 unknown, 403 someone else's). */
  async view(principal: Principal, id: string): Promise<AuthorizationRequestDetails> {
    return this.details(await this.owned(principal, id));
  }

  /**
   * Allows the request: the grant (when it is asked for), then `completed` if the connection
   * is usable, else still pending at the `connect` step. `validUntil` is used only when the
   * person has no active grant for the agent yet (an existing grant keeps its own).
   */
  async allow(
    principal: Principal,
    id: string,
    validUntil: string | null | undefined,
  ): Promise<AuthorizationRequestDetails> {
    // The body is checked whatever it is used for: a bad valid_until is 400 even when a grant exists.
    parseValidUntil(validUntil, this.clock.now());
    const record = this.pending(await this.owned(principal, id));
    await this.grants.assertAllowable(record.agentId);
    if (record.needsGrant && record.allowedAt === null) await this.writeGrant(principal, record, validUntil);
    const now = this.clock.now();
    const usable = sessionUsable(await this.sessions.find(record.principal, record.serviceId), now.getTime());
    const allowed = await this.requests.allow(
      record.id,
      principal.id,
      usable,
      now,
      usable ? this.recorded('authorization_request.completed', principal) : undefined,
    );
    if (allowed === undefined) return this.details(this.pending(await this.owned(principal, id)));
    return this.details(allowed);
  }

  /** Denies the request (pending only). */
  async deny(principal: Principal, id: string): Promise<AuthorizationRequestDetails> {
    const record = this.pending(await this.owned(principal, id));
    const denied = await this.requests.deny(
      record.id,
      principal.id,
      this.clock.now(),
      this.recorded('authorization_request.denied', principal),
    );
    if (denied === undefined) return this.details(this.pending(await this.owned(principal, id)));
    return this.details(denied);
  }

  /**
   * A connection to the service was stored for the person: every pending request of theirs
   * for it that they already allowed completes (the waiting gateway learns it even when the
   * browser never comes back to the page).
   */
  async connected(principal: string, serviceId: string): Promise<void> {
    await this.requests.completeAllowed(
      principal,
      serviceId,
      this.clock.now(),
      this.recorded('authorization_request.completed', { id: principal }),
    );
  }

  /** The ledger event of a change, recorded in its transaction (none when the ledger is off). */
  private recorded(
    type: 'authorization_request.completed' | 'authorization_request.denied',
    principal: Pick<Principal, 'id'>,
  ): WithinTransaction<AuthorizationRequestRecord> | undefined {
    return recordChange<AuthorizationRequestRecord>(this.events, (record) =>
      authorizationRequestEvent(type, record, { type: 'principal', id: principal.id }, null),
    );
  }

  /**
   * The request of `principal`: 404 for an unknown or malformed id; 403 for another person's,
   * recorded once per (request, opener) on the owner's activity. A pending request past its
   * expiry is ended here (the gateway waiting on it learns `expired`).
   */
  private async owned(principal: Principal, id: string): Promise<AuthorizationRequestRecord> {
    if (!isUuidShaped(id)) throw new ApiError('not_found', 'no such authorization request');
    let record = await this.requests.find(id.toLowerCase());
    if (record === undefined) throw new ApiError('not_found', 'no such authorization request');
    if (record.principal !== principal.id) {
      if (await this.requests.firstOpening(record.id, principal.id))
        await this.events.record(authorizationRequestMisdirected(record, principal.id), undefined);
      throw new ApiError('forbidden', 'this authorization request is for someone else');
    }
    if (record.status === 'pending' && record.expiresAt.getTime() <= this.clock.nowMs()) {
      record =
        (await this.requests.expireIfDue(
          record.id,
          this.clock.now(),
          recordChange<AuthorizationRequestRecord>(this.events, (expired) =>
            authorizationRequestEvent('authorization_request.expired', expired, BROKER, null),
          ),
        )) ?? record;
    }
    return record;
  }

  /** 409 when answered, 410 when expired. */
  private pending(record: AuthorizationRequestRecord): AuthorizationRequestRecord {
    switch (record.status) {
      case 'pending':
        if (record.expiresAt.getTime() > this.clock.nowMs()) return record;
        throw new ApiError('gone', 'this authorization request has expired');
      case 'expired':
        throw new ApiError('gone', 'this authorization request has expired');
      case 'completed':
        throw new ApiError('conflict', 'this authorization request was already allowed and completed');
      case 'denied':
        throw new ApiError('conflict', 'this authorization request was already denied');
    }
  }

  /** The grant Allow writes: the active grant's delegations plus the request's permission sets for its service. */
  private async writeGrant(
    principal: Principal,
    record: AuthorizationRequestRecord,
    validUntil: string | null | undefined,
  ): Promise<void> {
    const now = this.clock.now();
    const existing = await this.grantsRepository.findActive(principal.id, record.agentId, now);
    const merged = new Map<string, Set<string>>();
    const add = (setId: string, id: string): void => {
      const ids = merged.get(setId) ?? new Set<string>();
      ids.add(id);
      merged.set(setId, ids);
    };
    for (const d of existing?.delegations ?? []) add(d.permissionSetId, d.serviceId);
    for (const d of existing?.resourceDelegations ?? []) add(d.permissionSetId, d.resourceId);
    for (const setId of await this.stillOffered(record)) add(setId, record.serviceId);
    const grantedPermissionSets = Object.fromEntries([...merged].map(([setId, ids]) => [setId, [...ids]]));
    await this.grants.write(
      principal,
      record.agentId,
      {
        granted_permission_sets: grantedPermissionSets,
        valid_until: existing === undefined ? validUntil : (existing.validUntil?.toISOString() ?? null),
      },
      undefined,
    );
  }

  /** The request's permission sets still assigned to the agent and naming the service (an admin may have changed them). */
  private async stillOffered(record: AuthorizationRequestRecord): Promise<string[]> {
    const offered = new Set(
      (await this.requests.offeredPermissionSets(record.agentId, record.serviceId)).map((set) => set.permissionSetId),
    );
    const kept = record.permissionSetIds.filter((id) => offered.has(id));
    if (kept.length === 0)
      throw new ApiError('conflict', "the agent's permission sets for this service changed: ask the agent again");
    return kept;
  }

  private async details(record: AuthorizationRequestRecord): Promise<AuthorizationRequestDetails> {
    const now = this.clock.now();
    const [agent, service, sets, grant] = await Promise.all([
      this.agents.findById(record.agentId),
      this.services.findById(record.serviceId),
      this.permissionSets.findByIds(record.permissionSetIds),
      this.grantsRepository.findActive(record.principal, record.agentId, now),
    ]);
    // The agent and service rows cascade to the request: both exist unless deleted this very moment.
    if (agent === undefined || service === undefined) throw new ApiError('not_found', 'no such authorization request');
    const delegated = new Set<string>();
    for (const set of sets)
      for (const entry of set.serviceScopes)
        if (entry.serviceId === record.serviceId) entry.scopes.forEach((scope) => delegated.add(scope));
    const scopes = described([...delegated], service.scopes);
    const expiresIn =
      record.status === 'expired' ? 0 : Math.max(0, Math.floor((record.expiresAt.getTime() - now.getTime()) / 1000));
    return { record, step: stepOf(record), agent, service, scopes, grantExists: grant !== undefined, expiresIn };
  }
}
