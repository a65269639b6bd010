import { createHash } from 'node:crypto';
import { AuditLog } from '@broker/audit';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, Random, type ApprovalRecord, type RememberedAnswer, type RiskLevel } from '@broker/domain';
import {
  approvalAnsweredByRemembered,
  approvalEvent,
  approvalExpired,
  EventLedger,
  recordChange,
  type EventActor,
} from '@broker/events';
import { ApprovalRepository } from '@broker/persistence';
import { currentTraceId } from '@broker/telemetry';
import { Inject, Injectable } from '@nestjs/common';
import { CREATION_WINDOW_MS } from '../approval-rules';
import { argumentsHash } from '../patterns/canonical-json';
import { scopeCovers } from '../patterns/params-pattern';

/** Who asks, and alone may poll: the agent with its own credentials, or a gateway (its assertion's `sub`) for it. */
export type CibaRequester = 'agent' | { readonly gateway: string };

/** A backchannel authentication request (OpenID CIBA Core 1.0 §7.1) after the endpoint's checks. */
export interface CibaRequestInput {
  readonly principal: string;
  readonly agentId: string;
  readonly requester: CibaRequester;
  /** The one `authorization_details` entry: its tool call, and `json` its canonical text (stored, and carried by the token). */
  readonly detail: { tool: string; arguments: Record<string, unknown>; risk: RiskLevel | undefined; json: string };
  readonly bindingMessage: string | undefined;
  readonly scopes: readonly string[];
  readonly expiresInMs: number;
  readonly intervalMs: number;
}

export type CibaRequestOutcome =
  | { kind: 'created'; authReqId: string; expiresIn: number /* s */; interval: number /* s */; approvalId: string }
  | { kind: 'no_grant' }
  | { kind: 'rate_limited'; retryAfterSeconds: number; limit: 'pending' | 'rate' };

export type CibaPollOutcome =
  | { kind: 'pending' }
  | { kind: 'slow_down'; interval: number }
  | { kind: 'denied' }
  | { kind: 'expired' }
  | { kind: 'invalid' /* unknown, other agent or requester, used */ }
  | { kind: 'approved'; principal: string; agentId: string; authorizationDetailsJson: string; scopes: string[] };

/** `ciba_requester` is varchar(200): a gateway `sub` too long for it is kept as its digest. */
const REQUESTER_MAX = 200;

function requesterKey(requester: CibaRequester): string {
  if (requester === 'agent') return 'agent';
  const plain = `gateway:${requester.gateway}`;
  if (plain.length <= REQUESTER_MAX) return plain;
  return `gateway-sha256:${createHash('sha256').update(requester.gateway, 'utf8').digest('hex')}`;
}

function requesterActor(agentId: string, requester: CibaRequester): EventActor {
  return requester === 'agent' ? { type: 'agent', id: agentId } : { type: 'gateway', id: requester.gateway };
}

/** SHA-256 of the `auth_req_id`: all that is stored of it. */
function digest(authReqId: string): Buffer {
  return createHash('sha256').update(authReqId, 'utf8').digest();
}

/**
 * The remembered decision that answers a call at once (docs/ciba.md "Remembered decisions"):
 * among the pair's live permanent decisions for the tool, one whose pattern covers the
 * arguments (a null pattern: exactly the reviewed arguments, by hash). A denial wins.
 * Session approvals never apply (a backchannel request has no agent session).
 */
export function rememberedAnswer(
  decisions: readonly ApprovalRecord[],
  call: Readonly<Record<string, unknown>>,
  callHash: string,
): RememberedAnswer | undefined {
  const covering = decisions.filter(
    (decision) =>
      decision.persistence === 'permanent' &&
      scopeCovers(decision.paramsPattern, decision.argumentsHash, callHash, call),
  );
  const denial = covering.find((decision) => decision.status === 'denied');
  if (denial !== undefined) return { status: 'denied', rememberedId: denial.id };
  const approval = covering.find((decision) => decision.status === 'approved');
  if (approval !== undefined) return { status: 'approved', rememberedId: approval.id };
  return undefined;
}

/**
 * A CIBA request is a tool approval (docs/ciba.md): one `auth_req_id`, one tool call, one
 * approval row, decided by the person on the console's approval page like any other, under
 * the same limits, remembered decisions, events and webhooks. The `auth_req_id` is 32 random
 * bytes (base64url) of which only the SHA-256 is stored; it is never logged.
 */
@Injectable()
export class CibaRequests {
  private readonly maxPending: number;
  private readonly maxPerMinute: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly approvals: ApprovalRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly ledger: EventLedger,
  ) {
    this.maxPending = config.approvals.rate_limit.max_pending_per_pair;
    this.maxPerMinute = config.approvals.rate_limit.max_requests_per_minute;
  }

  /**
   * Creates the request's approval row: the person must hold an active grant for the agent
   * (else `no_grant`, which the endpoint answers like an unknown person), within the pair's
   * approval limits (else `rate_limited`). A remembered permanent decision covering the call
   * answers it at once (denial first); else the row waits for the person.
   */
  async request(input: CibaRequestInput): Promise<CibaRequestOutcome> {
    const now = this.clock.now();
    const authReqId = this.random.bytes(32).toString('base64url');
    const callHash = argumentsHash(input.detail.arguments);
    const traceId = currentTraceId();
    const actor = requesterActor(input.agentId, input.requester);
    const requested = recordChange(this.ledger, (record: ApprovalRecord) =>
      approvalEvent('approval.requested', record, actor, traceId),
    );
    const expired = recordChange(this.ledger, approvalExpired);
    const answered = recordChange(this.ledger, (answer: { record: ApprovalRecord; remembered: RememberedAnswer }) =>
      approvalAnsweredByRemembered(answer.record, answer.remembered.rememberedId, traceId),
    );
    const outcome = await this.approvals.createCiba(
      {
        id: this.random.uuid(),
        principal: input.principal,
        agentId: input.agentId,
        toolName: input.detail.tool,
        argumentsJson: JSON.stringify(input.detail.arguments),
        argumentsHash: callHash,
        riskLevel: input.detail.risk ?? null,
        requestSha256: digest(authReqId),
        requester: requesterKey(input.requester),
        bindingMessage: input.bindingMessage ?? null,
        authorizationDetailsJson: input.detail.json,
        scopes: input.scopes,
        intervalMs: input.intervalMs,
        expiresAt: new Date(now.getTime() + input.expiresInMs),
      },
      { maxPending: this.maxPending, maxPerWindow: this.maxPerMinute, windowMs: CREATION_WINDOW_MS },
      now,
      (decisions) => rememberedAnswer(decisions, input.detail.arguments, callHash),
      requested === undefined || expired === undefined || answered === undefined
        ? undefined
        : { requested, expired, answered },
    );
    const facts = {
      principal: input.principal,
      agent_id: input.agentId,
      tool_name: input.detail.tool,
      risk_level: input.detail.risk ?? null,
      requested_via: 'ciba',
    };
    switch (outcome.kind) {
      case 'agent_unknown':
        this.audit.record('approval_created', { ...facts, approval_id: null, outcome: 'refused_unknown_agent' });
        return { kind: 'no_grant' };
      case 'grant_required':
        this.audit.record('approval_created', { ...facts, approval_id: null, outcome: 'refused_no_grant' });
        return { kind: 'no_grant' };
      case 'rate_limited':
        this.audit.record('approval_created', {
          ...facts,
          approval_id: null,
          outcome: `refused_${outcome.limit}_limit`,
        });
        return {
          kind: 'rate_limited',
          retryAfterSeconds: Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)),
          limit: outcome.limit === 'pending' ? 'pending' : 'rate',
        };
      case 'created':
        this.audit.record('approval_created', {
          ...facts,
          approval_id: outcome.record.id,
          outcome: outcome.remembered === undefined ? 'created' : `answered_by_remembered_${outcome.remembered.status}`,
          remembered_approval_id: outcome.remembered?.rememberedId ?? null,
        });
        return {
          kind: 'created',
          authReqId,
          expiresIn: Math.ceil(input.expiresInMs / 1000),
          interval: Math.ceil(input.intervalMs / 1000),
          approvalId: outcome.record.id,
        };
    }
  }

  /**
   * One token request with `auth_req_id` (CIBA Core 1.0 §10.1, §11) by the agent, through the
   * same kind of requester that asked. `approved` is answered exactly once per request (one
   * conditional write wins across replicas); every later poll is `invalid`.
   */
  async poll(authReqId: string, agentId: string, requester: CibaRequester): Promise<CibaPollOutcome> {
    const now = this.clock.now();
    const { verdict, id, intervalMs } = await this.approvals.pollCiba(
      digest(authReqId),
      agentId,
      requesterKey(requester),
      now,
    );
    switch (verdict) {
      case 'invalid':
        return { kind: 'invalid' };
      case 'slow_down':
        return { kind: 'slow_down', interval: Math.ceil(intervalMs / 1000) };
      case 'expired':
        return { kind: 'expired' };
      case 'denied':
        return { kind: 'denied' };
      case 'pending':
        return { kind: 'pending' };
      case 'approved':
        return this.issue(id as string, agentId, requester, now);
    }
  }

  private async issue(id: string, agentId: string, requester: CibaRequester, now: Date): Promise<CibaPollOutcome> {
    const traceId = currentTraceId();
    const actor = requesterActor(agentId, requester);
    const issued = await this.approvals.issueCiba(
      id,
      now,
      recordChange(this.ledger, (changed: ApprovalRecord) =>
        changed.persistence === 'once' ? [approvalEvent('approval.consumed', changed, actor, traceId)] : [],
      ),
    );
    if (issued === undefined || issued.ciba === null) {
      // Another replica's poll won, the request expired, or the person's grant ended in between.
      const again = await this.approvals.findAnyOwner(id);
      if (again?.ciba?.tokenIssuedAt !== null && again?.ciba?.tokenIssuedAt !== undefined) return { kind: 'invalid' };
      if (again !== undefined && again.ciba !== null && again.ciba.expiresAt.getTime() <= now.getTime())
        return { kind: 'expired' };
      return { kind: 'denied' };
    }
    this.audit.record('approval_consumed', {
      approval_id: issued.id,
      principal: issued.principal,
      agent_id: issued.agentId,
      tool_name: issued.toolName,
      requested_via: 'ciba',
      outcome: 'token_issued',
    });
    return {
      kind: 'approved',
      principal: issued.principal,
      agentId: issued.agentId,
      authorizationDetailsJson: issued.ciba.authorizationDetailsJson,
      scopes: [...issued.ciba.scopes],
    };
  }
}
