import { assertNever, type OAuthErrorCode } from '@broker/domain';
import { apiStatus, oauthStatus } from './statuses';
import { internalErrorMessage, type ErrorResponse, type Failure } from './failure';
import type { ErrorContext } from './error-context';

function codeForStatus(status: number): OAuthErrorCode {
  if (status === 401) return 'invalid_client';
  if (status === 403) return 'access_denied';
  if (status === 404) return 'not_found';
  if (status === 503) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

function envelope(
  code: OAuthErrorCode,
  description: string,
  status: number,
  errorUri?: string,
  members?: Readonly<Record<string, unknown>>,
): ErrorResponse {
  const body: Record<string, unknown> = { error: code, error_description: description };
  if (errorUri !== undefined) body.error_uri = errorUri;
  // Extension members (RFC 6749 §5.2) follow the standard ones and never replace them.
  if (members !== undefined) for (const [name, value] of Object.entries(members)) body[name] ??= value;
  // RFC 6749 §5.1/§5.2: token endpoint responses must not be cached.
  return { status, body, headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache' } };
}

/**
 * The `{error, error_description[, error_uri]}` envelope of `/oauth2/*` and
 * `/.well-known/*`. Every request-shape problem is `invalid_request` (400), including
 * a body over the limit.
 */
export class OAuthExceptionFilter {
  present(failure: Failure, context: ErrorContext): ErrorResponse {
    switch (failure.kind) {
      case 'oauth': {
        const { code, description, errorUri, challenge, headers, members } = failure.error;
        // Its JSON errors are all 400, invalid_client included
        // (401 with invalid_client belongs to the token endpoint's client authentication).
        const status = code === 'invalid_client' && context.path === '/oauth2/authorize' ? 400 : oauthStatus(code);
        if (status === 500) return envelope('server_error', internalErrorMessage(context.traceId), 500);
        const answer = envelope(code, description, status, errorUri, members);
        if (challenge === undefined && headers === undefined) return answer;
        return {
          ...answer,
          headers: {
            ...answer.headers,
            ...headers,
            ...(challenge === undefined ? {} : { 'WWW-Authenticate': challenge }),
          },
        };
      }
      case 'api': {
        const status = apiStatus(failure.error.code);
        if (status >= 500)
          return envelope(
            codeForStatus(status),
            status === 503 ? failure.error.message : internalErrorMessage(context.traceId),
            status,
          );
        return envelope(codeForStatus(status), failure.error.message, status);
      }
      case 'validation':
      case 'body':
        return envelope('invalid_request', failure.error.message, 400);
      case 'http': {
        const code = codeForStatus(failure.status);
        if (code === 'server_error') return envelope(code, internalErrorMessage(context.traceId), 500);
        if (code === 'not_found') return envelope(code, `no endpoint ${context.method} ${context.path}`, 404);
        return envelope(code, code, failure.status);
      }
      case 'unexpected':
        return envelope('server_error', internalErrorMessage(context.traceId), 500);
      default:
        return assertNever(failure, 'failure');
    }
  }
}
