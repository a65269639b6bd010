/**
 * Tool approvals: the store's rules, parameter patterns (one minimatch dialect) and the
 * gateways' long-poll sync across replicas.
 */
export { ApprovalsModule } from './approvals.module';
export { ApprovalPages } from './approval-pages';
export {
  ApprovalRequests,
  type ApprovalRequestInput,
  type CreatedApproval,
} from './requests/approval-requests.service';
export {
  CibaRequests,
  rememberedAnswer,
  type CibaRequestInput,
  type CibaRequestOutcome,
  type CibaPollOutcome,
  type CibaRequester,
} from './ciba/ciba-requests.service';
export { ApprovalDecisions, type ApproveInput, type ScopePreview } from './decisions/approval-decisions.service';
export {
  ApprovalSync,
  etagOf,
  parseLongPollTimeout,
  type SyncRequest,
  type SyncAnswer,
  type ApprovalPair,
  MIN_LONG_POLL_SECONDS,
  MAX_LONG_POLL_SECONDS,
} from './sync/approval-sync.service';
export { LongPollHub, type WaitOutcome } from './sync/long-poll-hub';
export { ExpirySweeper } from './sync/expiry-sweeper';
export { ApprovalGatewayAuth, type GatewayHeaders, type GatewayIdentity } from './gateway/approval-gateway-auth';
export { shownStatus, type ShownStatus } from './approval-rules';
export {
  PATTERN_DIALECT,
  MAX_PATTERN_BYTES,
  MAX_PATTERN_ENTRIES,
  argumentMatches,
  scopeCovers,
} from './patterns/params-pattern';
export { canonicalJson, argumentsHash } from './patterns/canonical-json';
