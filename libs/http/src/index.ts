/**
 * HTTP cross-cutting concerns shared by both applications (imported by apps only):
 * bootstrap (`configureApp`, `startServers`, `runMain`), the error envelopes,
 * traceresponse, CORS, body parsing, validation, health and logging.
 */
export { configureApp } from './configure-app';
export type { HttpRuntime } from './http-runtime';
export type { CountQueries, QueryCount } from './logging/query-count.middleware';
export { CoreModule } from './core.module';
export { startServers, runMain, StartupError, type ServerDefinition, type StartOptions, type RunningBroker, type RunningServer } from './launch';
export type { BrokerRuntime } from './runtime';
export { Lifecycle, type LifecyclePhase } from './lifecycle/lifecycle';
export { createLogger, serializeError } from './logging/create-logger';
export { redactSecrets, isSecretField, REDACTED } from './logging/redact';
export { buildOpenApiDocument } from './openapi';
export { RequestValidationError, RequestBodyError } from './errors/request-errors';
export { parseTraceparent } from './trace/traceparent';
export { IsHttpUrl, IsHttpsOrLoopbackUrl, IsPlainText, IsRedirectUri, IsScopeToken, MAX_LIST_ENTRIES } from './validation/validators';
export { HOT_ROUTES, type HotRoute, type HotRouteAnswer } from './hot-routes/hot-route';
export { TOKEN_BODY_LIMIT_BYTES } from './body/form-body.middleware';
export { RefusedJsonBody, MAX_JSON_NESTING } from './body/refused-json-body';
export { NoBody } from './validation/no-body';
