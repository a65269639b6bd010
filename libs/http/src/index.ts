/**
 * HTTP cross-cutting concerns shared by both applications: the request pipeline
 * (`configureApp`, the hot routes' entrance), the error envelopes, traceresponse, CORS,
 * body parsing, validation, the lifecycle's shutdown gate and logging. What boots a
 * process (database, runtime, `/health`) is `@broker/bootstrap`'s, so http imports no
 * storage (lib boundaries as allow-lists).
 */
export { configureApp } from './configure-app';
export { adminConsoleUrl } from './admin-console/admin-console.middleware';
export type { HttpRuntime } from './http-runtime';
export type { CountQueries, QueryCount } from './logging/query-count.middleware';
export { Lifecycle, type LifecyclePhase } from './lifecycle/lifecycle';
export { createLogger, serializeError } from './logging/create-logger';
export { redactSecrets, isSecretField, REDACTED } from './logging/redact';
export { buildOpenApiDocument } from './openapi/build-document';
export { RequestValidationError, RequestBodyError } from './errors/request-errors';
export {
  answersTo,
  ERROR_VOCABULARY,
  ErrorVocabulary,
  type CodedError,
  type VocabularyEntry,
  type WireAnswer,
} from './errors/error-vocabulary';
export { parseTraceparent } from './trace/traceparent';
export {
  IsDateTime,
  IsHttpUrl,
  IsHttpsOrLoopbackUrl,
  IsPlainText,
  IsRedirectUri,
  IsResourceIndicatorEntry,
  IsScopeToken,
  MAX_LIST_ENTRIES,
} from './validation/validators';
export { HOT_ROUTES, type HotRoute, type HotRouteAnswer } from './hot-routes/hot-route';
export { BACKCHANNEL_BODY_LIMIT_BYTES, TOKEN_BODY_LIMIT_BYTES } from './body/form-body.middleware';
export { RefusedJsonBody, MAX_JSON_NESTING } from './body/refused-json-body';
export { NoBody } from './validation/no-body';
export { ValidationVocabulary, type ValidationCode } from './validation/validation-vocabulary';
export { ApiErrors, OAuthErrors } from './openapi/api-errors.decorator';
export { BrokerExpressAdapter } from './broker-express-adapter';
