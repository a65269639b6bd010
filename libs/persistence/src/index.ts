/**
 * Persistence: TypeORM entities, migrations, the data source (PGlite or PostgreSQL)
 * and repository classes. No TypeORM type leaves this lib except through `Database`.
 */
export { Database, type StorageBackend } from './database';
export { PersistenceModule } from './persistence.module';
export { runCountingQueries, type QueryCount } from './query-count';
export type { Installation } from './installation/installation.repository';
export { AgentRepository, type AgentInput, type SuspensionOutcome } from './registry/agent.repository';
export type { ClientRecord } from './registry/client-cache';
export { ServiceRepository, type ServiceInput, type SecretChange } from './registry/service.repository';
export {
  PermissionSetRepository,
  type PermissionSetInput,
  type PermissionSetFilter,
} from './registry/permission-set.repository';
export { ProtectedResourceRepository, type ProtectedResourceInput } from './registry/protected-resource.repository';
export { RESOURCE_CATALOG_TTL_MS } from './registry/resource-catalog';
export { ClientCredentialRepository, type ClientCredentialRecord } from './registry/client-credential.repository';
export {
  SigningKeyRepository,
  type SigningKeyRecord,
  type NewSigningKey,
  type DeleteKeyOutcome,
} from './registry/signing-key.repository';
export { GrantRepository } from './registry/grant.repository';
export {
  AdminGrantRepository,
  type AdminGrantFilter,
  type AdminGrantTarget,
  type AdminGrantView,
} from './registry/admin-grant.repository';
export { RegistryCountsRepository, type RegistryCounts } from './registry/registry-counts.repository';
export { GrantClientRepository } from './registry/grant-client.repository';
export { ExchangeLookup, type ExchangeContext } from './registry/exchange-lookup';
export {
  RefreshTokenRepository,
  type RefreshTokenRecord,
  type NewRefreshFamily,
  type RefreshPresentation,
  type RefreshRefusal,
  type RotationOutcome,
} from './registry/refresh-token.repository';
export {
  TokenStateRepository,
  type RefreshTokenState,
  type AccessTokenFacts,
  type AccessTokenKey,
  type GrantFacts,
} from './registry/token-state.repository';
export { RevokedAccessTokenRetention } from './registry/revoked-access-token-retention';
export { DpopProofReplayRetention } from './registry/dpop-proof-replay-retention';
export { RefreshTokenRetention } from './registry/refresh-token-retention';
export {
  SessionRepository,
  type ThirdPartySessionRecord,
  type NewThirdPartySession,
  type LockedSession,
  type LockedWrite,
  type SessionOverview,
  type ClaimedSession,
  type RefreshClaim,
} from './registry/session.repository';
export { EnvelopeStore, ENVELOPE_COLUMNS, type EnvelopeColumn, type StoredEnvelope } from './registry/envelope-store';
export { AuthorizationCodeRepository, type AuthorizationCodeRecord } from './registry/authorization-code.repository';
export { ClientAssertionReplayRepository, DpopProofReplayRepository } from './registry/replay-records.repository';
export {
  EnterpriseAuthorizationRepository,
  type EnterpriseAuthorization,
  type EnterpriseAuthorizationOwner,
  type EnterpriseAuthorizationView,
  type EnterpriseIssue,
  type RecordOutcome,
} from './registry/enterprise-authorization.repository';
export {
  AuthorizationSessionAnswerRepository,
  type AuthorizationSessionAnswer,
  type AuthorizationDecision,
} from './registry/authorization-session-answer.repository';
export { ApprovalRepository } from './approvals/approval.repository';
export {
  AuthorizationRequestRepository,
  scopeKey,
  sessionUsable,
  type AuthorizationRequestCreate,
  type AuthorizationRequestLimits,
  type AuthorizationRequestRecord,
  type AuthorizationRequestState,
  type AuthorizationRequestStatus,
  type NewAuthorizationRequest,
  type OfferedPermissionSet,
} from './authorization-requests/authorization-request.repository';
export { ApprovalChangeFeed, APPROVALS_CHANNEL, type ApprovalChangeListener } from './approvals/approval-change-feed';
export { EventRepository, type HistoryAgent } from './events/event.repository';
export type { WithinTransaction } from './within-transaction';
export {
  WebhookRepository,
  type WebhookRecord,
  type WebhookInput,
  type WebhookDeliveryRecord,
  type WebhookDeliveryStatus,
} from './webhooks/webhook.repository';
export {
  WebhookDeliveryRepository,
  type ClaimedDelivery,
  type DeliveryClaim,
  type AttemptOutcome,
} from './webhooks/webhook-delivery.repository';
