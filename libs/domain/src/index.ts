/**
 * Pure domain types and rules. Imports nothing of ours and no framework.
 */
export { assertNever } from './assert-never';
export { ApiError, type ApiErrorCode, type FieldIssue } from './api-error';
export { OAuthError, withMembers, type OAuthErrorCode } from './oauth-error';
export { Clock, SystemClock } from './clock';
export { PURGE_BATCH, RetentionJob, type RetentionLog, type RetentionTarget } from './retention-job';
export { Random, CryptoRandom } from './random';
export { type Principal, type PrincipalProblem, PRINCIPAL_MAX_LENGTH, normalisePrincipal } from './principal';
export { isCanonicalUuid, isUuidShaped } from './uuid';
export { textProblem, type TextProblem } from './text';
export { parseRfc3339DateTime } from './date-time';
export * from './registry/registry.types';
export { RegistryError, type RegistryErrorCode } from './registry/registry-error';
export { scopesAllowedFor, OFFLINE_SCOPES, type ScopeRuleOptions } from './registry/scopes-allowed';
export {
  normaliseResourceUri,
  parseAbsoluteUrl,
  isHttpUrl,
  type HttpUrlOptions,
  isHttpsOrLoopbackUrl,
  isRedirectUri,
  isResourceIndicatorEntry,
  MAX_AGENT_ALLOWED_RESOURCES,
  canonicalIdProblem,
  hasDotSegment,
} from './registry/resource-uri';
export { thirdPartyCallbackUrl } from './registry/third-party-callback';
export { clientUriProblem, isClientDocumentUrl, matchesClientUri, redirectHostOf } from './registry/client-uri';
export { ComponentHealth, type ComponentStatus } from './component-health';
export { ASYMMETRIC_ALGORITHMS, type AsymmetricAlgorithm } from './jws-algorithms';
export { compileCel, celReferences, CelCompileError, type CompiledExpression } from './cel';
export { ApprovalError, type ApprovalErrorCode } from './approvals/approval-error';
export type {
  ApprovalRecord,
  ApprovalStatus,
  ApprovalPersistence,
  RiskLevel,
  ParamsPattern,
  NewApproval,
  CreationLimits,
  CreateOutcome,
  SyncedApproval,
  SyncSnapshot,
  SyncFilter,
  CibaFacts,
  NewCibaApproval,
  RememberedAnswer,
  CibaCreateOutcome,
  CibaPollVerdict,
  CibaPollResult,
} from './approvals/approval.types';
export { BackgroundJob, type HasBackgroundJob, type JobDefinition, type JobRun } from './background-job';
