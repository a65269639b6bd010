import type { BrokerRequest } from '@broker/auth';
import type { ServerKind } from '@broker/config';
import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { ApiExceptionFilter } from './api-exception.filter';
import type { ErrorContext } from './error-context';
import { classifyFailure, type ErrorResponse } from './failure';
import { OAuthExceptionFilter } from './oauth-exception.filter';

/** OAuth2 endpoints answer errors in the OAuth envelope (SPEC.md "Response envelopes"). */
export function isOAuthPath(path: string): boolean {
  return path === '/oauth2' || path.startsWith('/oauth2/') || path.startsWith('/.well-known/');
}

/**
 * The one global filter: sorts the thrown value, lets the envelope of the route's
 * family (OAuth2 or API) choose status and body, logs server errors with their detail
 * under the request's trace id, and writes the response. It also catches what fails
 * before routing (body parsing, unknown routes), so those get the right envelope too.
 */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly api = new ApiExceptionFilter();
  private readonly oauth = new OAuthExceptionFilter();

  constructor(
    private readonly server: ServerKind,
    private readonly logger: Logger,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<BrokerRequest>();
    const response = host.switchToHttp().getResponse<Response>();
    const { status, body, headers } = this.toResponse(exception, request);
    this.logServerError(status, exception, { traceId: request.traceId ?? 'unknown', method: request.method, path: request.path });
    if (response.headersSent) {
      response.end();
      return;
    }
    for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
    response.status(status).json(body);
  }

  toResponse(exception: unknown, request: BrokerRequest): ErrorResponse {
    return this.present(exception, { traceId: request.traceId ?? 'unknown', method: request.method, path: request.path });
  }

  /** The envelope of `path`'s family for a thrown value (also used by the hot routes). */
  present(exception: unknown, request: Omit<ErrorContext, 'server'>): ErrorResponse {
    const context: ErrorContext = { server: this.server, ...request };
    const failure = classifyFailure(exception);
    return isOAuthPath(request.path) ? this.oauth.present(failure, context) : this.api.present(failure, context);
  }

  /** Server errors other than a deliberate 503 are failures to investigate: logged with their detail. */
  logServerError(status: number, exception: unknown, request: Omit<ErrorContext, 'server'>): void {
    if (status >= 500 && status !== 503) this.logger.error({ trace_id: request.traceId, err: exception, method: request.method, path: request.path }, 'request failed with a server error');
  }
}
