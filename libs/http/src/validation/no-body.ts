import {
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { RefusedJsonBody } from '../body/refused-json-body';
import { RequestValidationError } from '../errors/request-errors';

/** No body at all, or the empty object a client library may send with every POST. */
function isEmptyBody(body: unknown): boolean {
  if (body === undefined) return true;
  return (
    body !== null &&
    typeof body === 'object' &&
    Object.getPrototypeOf(body) === Object.prototype &&
    Object.keys(body).length === 0
  );
}

/** Refuses any request body on an operation that takes none (see {@link NoBody}). */
@Injectable()
export class NoBodyInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const body: unknown = context.switchToHttp().getRequest<Request>().body;
    if (body instanceof RefusedJsonBody) throw body.error;
    if (!isEmptyBody(body))
      throw new RequestValidationError('body', [
        { field: 'body', problem: 'must be empty: this operation takes no request body' },
      ]);
    return next.handle();
  }
}

/**
 * The operation takes no request body: anything but none or `{}` is 400, in the route's
 * vocabulary (an interceptor runs after every guard, so after authentication, and inside the
 * controller's own interceptors). An unknown field is refused, never ignored; here
 * every field is unknown.
 */
export function NoBody(): MethodDecorator {
  return UseInterceptors(NoBodyInterceptor);
}
