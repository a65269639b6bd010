import type { RiskLevel } from '@broker/domain';

/**
 * Who asked for a backchannel authentication request: the agent with its own secret, or a
 * gateway (its client assertion's `sub`) on the agent's behalf. The poll must come from the same kind.
 */
export type CibaRequester = 'agent' | { readonly gateway: string };

/** A validated backchannel authentication request (OpenID CIBA Core 1.0 §7.1) to store as one approval. */
export interface CibaRequestInput {
  readonly principal: string;
  readonly agentId: string;
  readonly requester: CibaRequester;
  /** The one tool call of `authorization_details`, and `json`: its canonical text (stored and echoed as is). */
  readonly detail: {
    tool: string;
    arguments: Record<string, unknown>;
    risk: RiskLevel | undefined;
    json: string;
  };
  readonly bindingMessage: string | undefined;
  readonly scopes: readonly string[];
  readonly expiresInMs: number;
  readonly intervalMs: number;
}

/** What storing the request came to: a new `auth_req_id`, no grant of the person, or a rate limit. */
export type CibaRequestOutcome =
  | { kind: 'created'; authReqId: string; expiresIn: number; interval: number; approvalId: string }
  | { kind: 'no_grant' }
  | { kind: 'rate_limited'; retryAfterSeconds: number; limit: 'pending' | 'rate' };

/** One poll of the token endpoint (OpenID CIBA Core 1.0 §10.1, §11). `approved` comes once per `auth_req_id`. */
export type CibaPollOutcome =
  | { kind: 'pending' }
  | { kind: 'slow_down'; interval: number }
  | { kind: 'denied' }
  | { kind: 'expired' }
  | { kind: 'invalid' }
  | { kind: 'approved'; principal: string; agentId: string; authorizationDetailsJson: string; scopes: string[] };

/**
 * The approval engine behind the backchannel authentication endpoint and the CIBA grant: a
 * request is an approval (docs/ciba.md). Implemented by the approvals library (which sits
 * above this one), bound to `CIBA_REQUESTS` by the end-user server.
 */
export interface CibaRequestsPort {
  request(input: CibaRequestInput): Promise<CibaRequestOutcome>;
  poll(authReqId: string, agentId: string, requester: CibaRequester): Promise<CibaPollOutcome>;
}

/** DI token of the `CibaRequestsPort` (optional: servers without it serve no CIBA). */
export const CIBA_REQUESTS = Symbol('CIBA_REQUESTS');
