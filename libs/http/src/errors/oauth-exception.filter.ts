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

/**
 * The status of `code` on the endpoint at `path`: the authorization endpoint's JSON errors are all
 * 400, invalid_client included (401 belongs to client authentication at the token endpoint). On the
 * backchannel authentication endpoint `unauthorized_client` is 403 (OpenID CIBA Core 1.0 §13), and
 * its rate limit is 429 with `temporarily_unavailable` (RFC 6585 §4), not an unavailable server's 503.
 */
/** OpenID CIBA Core 1.0 §7: the backchannel authentication endpoint's path. */
const BACKCHANNEL_AUTHENTICATION_PATH = '/oauth2/bc-authorize';

function oauthStatusAt(code: OAuthErrorCode, path: string): number {
  if (code === 'invalid_client' && path === '/oauth2/authorize') return 400;
  if (path === BACKCHANNEL_AUTHENTICATION_PATH) {
    if (code === 'unauthorized_client') return 403;
    if (code === 'temporarily_unavailable') return 429;
  }
  return oauthStatus(code);
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
        const status = failure.error.status ?? oauthStatusAt(code, context.path);
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
