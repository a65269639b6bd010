import type { ServerKind } from '@broker/config';
import type { ApiErrorCode, OAuthErrorCode } from '@broker/domain';
import type { OpenAPIObject } from '@nestjs/swagger';
import { isOAuthPath } from '../errors/error-envelope.filter';
import { apiStatus, oauthStatus } from '../errors/statuses';
import { ERROR_CODES_EXTENSION } from './api-errors.decorator';

type Json = Record<string, unknown>;
type ErrorCode = ApiErrorCode | OAuthErrorCode;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const UNSAFE = new Set(['put', 'post', 'delete', 'patch']);

/** Wording of an error status in the documents. */
const STATUS_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'The request is malformed or breaks a rule (`details` names the fields when known)',
  401: 'Authentication required or failed',
  403: 'Refused: the caller may not do this, or a cross-site request',
  404: 'No such resource',
  409: 'Conflicts with the current state',
  410: 'No longer available',
  413: 'Request body over the limit',
  415: 'Request body of an unsupported media type',
  422: 'Understood but not applicable to this resource',
  429: 'Too many requests (`Retry-After` says when to retry)',
  500: 'Internal error: the body carries only a reference to the log (`internal error (ref <trace id>)`)',
  502: 'The third-party provider refused or failed',
  503: 'Shutting down or a dependency is unavailable',
};

/** The `{error, message}` and OAuth2 envelopes (docs/http-api.md). */
const ERROR_SCHEMAS: Readonly<Record<string, Json>> = {
  FieldIssue: {
    type: 'object',
    description: 'One field-level problem of a refused request.',
    properties: { field: { type: 'string' }, problem: { type: 'string' } },
    required: ['field', 'problem'],
    additionalProperties: false,
  },
  ApiError: {
    type: 'object',
    description: 'Error envelope of the end-user and admin APIs.',
    properties: {
      error: { type: 'string', description: 'machine-readable code' },
      message: { type: 'string', description: 'human-readable text; never a credential' },
      details: { type: 'array', items: { $ref: '#/components/schemas/FieldIssue' } },
    },
    required: ['error', 'message'],
    additionalProperties: false,
  },
  OAuthError: {
    type: 'object',
    description: 'Error envelope of the OAuth2 endpoints (RFC 6749 §5.2).',
    properties: {
      error: { type: 'string', description: 'RFC 6749 / RFC 8693 error code' },
      error_description: { type: 'string' },
      error_uri: { type: 'string', format: 'uri' },
      authorization_request: {
        type: 'object',
        description:
          "only on a token exchange refused for want of the person's grant or connection: the link the gateway shows the person (docs/authorization-requests.md)",
        properties: {
          id: { type: 'string', format: 'uuid' },
          url: { type: 'string', format: 'uri' },
          expires_at: { type: 'string', format: 'date-time' },
          expires_in: { type: 'integer', minimum: 0 },
        },
        required: ['id', 'url', 'expires_at', 'expires_in'],
        additionalProperties: false,
      },
    },
    required: ['error', 'error_description'],
    additionalProperties: false,
  },
};

interface OperationShape {
  readonly path: string;
  readonly method: string;
  readonly operation: Json;
}

/** Codes every operation of this shape can answer, whatever its own logic (the shared pipeline's refusals). */
function pipelineCodes(server: ServerKind, { path, method, operation }: OperationShape): ErrorCode[] {
  const parameters = (operation.parameters as Json[] | undefined) ?? [];
  const requirements = (operation.security as Json[] | undefined) ?? [];
  const principal = requirements.some((requirement) => 'PrincipalHeader' in requirement || 'SessionAuth' in requirement || 'preAuth' in requirement);
  // `{}` among the requirements: the principal is optional (read when sent, never a 401).
  const secured = principal && !requirements.some((requirement) => Object.keys(requirement).length === 0);
  if (isOAuthPath(path)) {
    const codes: OAuthErrorCode[] = ['server_error', 'temporarily_unavailable'];
    if (parameters.length > 0 || operation.requestBody !== undefined || principal) codes.push('invalid_request');
    if (secured) codes.push('invalid_client');
    return codes;
  }
  const codes: ApiErrorCode[] = ['internal error', 'service unavailable'];
  const requestCode: ApiErrorCode = server === 'admin' ? 'invalid request' : 'bad request';
  // A principal over 200 characters, repeated or not UTF-8 is a `bad request` on both servers (docs/http-api.md).
  if (secured) codes.push('unauthorized');
  if (principal) codes.push('bad request');
  if (parameters.length > 0) codes.push(requestCode);
  // Any request carrying a body has it read under the limit and its media type checked, whatever the method.
  codes.push('payload too large', 'unsupported media type');
  // A body is refused when it breaks the operation's schema or is sent to an unsafe operation that takes none.
  if (operation.requestBody !== undefined || UNSAFE.has(method)) {
    codes.push(...(server === 'admin' ? (['invalid request body', 'validation failed'] as const) : (['invalid request'] as const)));
  }
  // Cross-site request refusal: every unsafe method of the APIs. On the admin server, a principal without a role
  // (`server.admin.authorization.admins`) is refused everywhere, a viewer on unsafe methods (docs/admin-api.md "Roles").
  if (UNSAFE.has(method) || (server === 'admin' && secured)) codes.push('forbidden');
  return codes;
}

/** The OAuth2 envelope has no `details`, and its endpoints are cross-origin by design. */
const OAUTH_STATUS_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'The request is malformed or refused (RFC 6749 §5.2)',
  403: 'Refused: the caller may not do this',
  500: 'Internal error: `error_description` carries only a reference to the log',
};

function errorResponse(envelope: 'ApiError' | 'OAuthError', status: number, codes: readonly string[]): Json {
  const schema: Json = { allOf: [{ $ref: `#/components/schemas/${envelope}` }, { type: 'object', properties: { error: { enum: [...codes].sort() } } }] };
  const description = (envelope === 'OAuthError' ? OAUTH_STATUS_DESCRIPTIONS[status] : undefined) ?? STATUS_DESCRIPTIONS[status] ?? 'Error';
  const response: Json = { description, content: { 'application/json': { schema } } };
  if (status === 429) response.headers = { 'Retry-After': { description: 'seconds until a retry can succeed', schema: { type: 'integer', minimum: 1 } } };
  return response;
}

/** Adds each error answer of an operation, grouped by status, in its family's envelope. */
function documentErrors(server: ServerKind, shape: OperationShape): void {
  const { path, operation } = shape;
  const own = (operation[ERROR_CODES_EXTENSION] as ErrorCode[] | undefined) ?? [];
  delete operation[ERROR_CODES_EXTENSION];
  const oauth = isOAuthPath(path);
  const byStatus = new Map<number, Set<string>>();
  for (const code of [...pipelineCodes(server, shape), ...own]) {
    const status = oauth ? oauthStatus(code as OAuthErrorCode) : apiStatus(code as ApiErrorCode);
    const codes = byStatus.get(status) ?? new Set<string>();
    codes.add(code);
    byStatus.set(status, codes);
  }
  const responses = (operation.responses as Json | undefined) ?? {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    // An operation's own schema for a status (health's 503 report) stays as written.
    if (responses[String(status)] === undefined) responses[String(status)] = errorResponse(oauth ? 'OAuthError' : 'ApiError', status, [...codes]);
  }
  operation.responses = responses;
}

/**
 * OpenAPI 3.0's `nullable` as OpenAPI 3.1 (JSON Schema 2020-12) says it: `null` among
 * the types, or one of the referenced schema and `null`.
 */
function toJsonSchema(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(toJsonSchema);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Json;
  for (const value of Object.values(schema)) toJsonSchema(value);
  if (!('nullable' in schema)) return;
  const nullable = schema.nullable === true;
  delete schema.nullable;
  if (!nullable) return;
  if (typeof schema.type === 'string') {
    schema.type = [schema.type, 'null'];
    if (Array.isArray(schema.enum)) schema.enum = [...(schema.enum as unknown[]), null];
    return;
  }
  const ref = typeof schema.$ref === 'string' ? { $ref: schema.$ref } : Array.isArray(schema.allOf) && schema.allOf.length === 1 ? (schema.allOf[0] as Json) : undefined;
  if (ref === undefined) throw new Error(`openapi: a nullable schema without a type: ${JSON.stringify(schema)}`);
  delete schema.$ref;
  delete schema.allOf;
  schema.oneOf = [ref, { type: 'null' }];
}

/**
 * A component schema that lists its properties is closed: requests with unknown fields
 * are refused (docs/http-api.md) and responses carry only documented fields. A
 * free-form object (no `properties`) stays open.
 */
function closeObjects(schemas: Json): void {
  for (const schema of Object.values(schemas) as Json[]) {
    if (schema.properties !== undefined && schema.additionalProperties === undefined) schema.additionalProperties = false;
  }
}

/**
 * The operation's JSDoc (read by the swagger plugin as its summary) as a one-line
 * summary: its first sentence; the whole text becomes the description when longer.
 */
function summarize(operation: Json): void {
  if (typeof operation.summary !== 'string') return;
  const text = operation.summary.replace(/\s*\n\s*/g, ' ').trim();
  const end = text.search(/[.;:] /);
  const first = end === -1 ? text : text.slice(0, end + 1);
  operation.summary = first.replace(/[.;:]$/, '');
  if (first !== text && operation.description === undefined) operation.description = text;
}

/**
 * Completes the document Nest generated from the controllers and DTOs into the
 * published contract: OpenAPI 3.1, the error envelopes as schemas, and every error
 * answer of every operation (the pipeline's own plus the codes the operation declares
 * with `@ApiErrors` / `@OAuthErrors`).
 */
export function completeOpenApiDocument(document: OpenAPIObject, server: ServerKind): OpenAPIObject {
  const result = document as unknown as Json & { paths: Record<string, Json>; components: Json & { schemas?: Json } };
  result.openapi = '3.1.0';
  toJsonSchema(result.paths);
  toJsonSchema(result.components);
  const schemas = (result.components.schemas ??= {});
  closeObjects(schemas);
  const oauthUsed = Object.keys(result.paths).some(isOAuthPath);
  Object.assign(schemas, { FieldIssue: ERROR_SCHEMAS.FieldIssue, ApiError: ERROR_SCHEMAS.ApiError }, oauthUsed ? { OAuthError: ERROR_SCHEMAS.OAuthError } : {});
  for (const [path, item] of Object.entries(result.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (operation === undefined) continue;
      summarize(operation);
      // A public operation says so (`security: []`) rather than leaving it unsaid.
      operation.security ??= [];
      documentErrors(server, { path, method, operation });
    }
  }
  return document;
}
