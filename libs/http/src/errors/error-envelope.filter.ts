import type { BrokerRequest } from '@broker/auth';
import type { ServerKind } from '@broker/config';
import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { ApiExceptionFilter } from './api-exception.filter';
import type { ErrorContext } from './error-context';
import { ErrorVocabulary } from './error-vocabulary';
import { classifyFailure, type ErrorResponse } from './failure';
import { OAuthExceptionFilter } from './oauth-exception.filter';
import { routeValidationCode } from '../validation/validation-vocabulary';

/** OAuth2 endpoints answer errors in the OAuth envelope (docs/http-api.md). */
export function isOAuthPath(path: string): boolean {
  return path === '/oauth2' || path.startsWith('/oauth2/') || path.startsWith('/.well-known/');
}

/** An error answer as written: status, headers (the JSON content type included) and the serialised envelope. */
export interface ErrorAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The page a browser gets instead of an error's JSON (the console's), or undefined to keep the JSON. */
export type BrowserErrorPage = (
  request: BrokerRequest,
  status: number,
  code: string,
) => { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: Buffer } | undefined;

/** The envelope's `error` code of a serialised answer, or '' when it has none. */
function errorCodeOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : '';
  } catch {
    return '';
  }
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
    /** On the end-user server serving the console: the page for a browser's unknown path or refused authorization request. */
    private readonly browserPage?: BrowserErrorPage,
    /** The app's one table from library error codes to its wire answers (API routes). */
    private readonly vocabulary: ErrorVocabulary = ErrorVocabulary.none,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<BrokerRequest>();
    const response = host.switchToHttp().getResponse<Response>();
    const answer = this.answer(exception, {
      traceId: request.traceId ?? 'unknown',
      method: request.method,
      path: request.path,
      validationCode: routeValidationCode(request),
    });
    if (response.headersSent) {
      response.end();
      return;
    }
    // A person's browser gets the console's page with the same status; API clients keep the JSON.
    const page = this.browserPage?.(request, answer.status, errorCodeOf(answer.body));
    if (page !== undefined) {
      response.writeHead(page.status, page.headers);
      response.end(page.body);
      return;
    }
    response.status(answer.status).set(answer.headers).send(answer.body);
  }

  /**
   * The error answer to a thrown value, ready to write, for both entrances (this filter
   * and the hot routes): the envelope of `path`'s family as JSON, server errors logged
   * with their detail under the request's trace id first (the detail is never sent).
   */
  answer(exception: unknown, request: Omit<ErrorContext, 'server'>): ErrorAnswer {
    const { status, body, headers } = this.present(exception, request);
    this.logServerError(status, exception, request);
    return {
      status,
      headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(body),
    };
  }

  /** The envelope of `path`'s family for a thrown value. */
  private present(exception: unknown, request: Omit<ErrorContext, 'server'>): ErrorResponse {
    const context: ErrorContext = { server: this.server, ...request };
    return isOAuthPath(request.path)
      ? this.oauth.present(classifyFailure(exception), context)
      : this.api.present(classifyFailure(this.vocabulary.translate(exception)), context);
  }

  /** Server errors other than a deliberate 503 are failures to investigate: logged with their detail. */
  private logServerError(status: number, exception: unknown, request: Omit<ErrorContext, 'server'>): void {
    if (status >= 500 && status !== 503)
      this.logger.error(
        { trace_id: request.traceId, err: exception, method: request.method, path: request.path },
        'request failed with a server error',
      );
  }
}
