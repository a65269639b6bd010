import type { ApiErrorCode } from '@broker/domain';
import {
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';

/** The 400 codes a request validation failure can be answered with (docs/http-api.md). */
export type ValidationCode = Extract<
  ApiErrorCode,
  'bad request' | 'invalid request' | 'invalid request body' | 'validation failed'
>;

/** The code each request that reached a route with {@link ValidationVocabulary} answers its validation failures with. */
const routeCodes = new WeakMap<Request, ValidationCode>();

/** Records the route's validation code on the request, for the error envelope (see {@link ValidationVocabulary}). */
@Injectable()
class ValidationVocabularyInterceptor implements NestInterceptor {
  constructor(private readonly code: ValidationCode) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    routeCodes.set(context.switchToHttp().getRequest<Request>(), this.code);
    return next.handle();
  }
}

/**
 * Every request validation failure of these routes (DTO, `@NoBody()`, a refused JSON body
 * key) is answered with `code` instead of the server's usual vocabulary, by the error
 * envelope, the one place that chooses codes. For an API whose contract
 * names its own code: the approvals API says 400 `bad request` for the body too,
 * where the rest of the end-user API says `invalid request`. It applies from the route's
 * interceptors on (after every guard), so a failure before the route keeps the server's code.
 */
export function ValidationVocabulary(code: ValidationCode): ClassDecorator & MethodDecorator {
  return UseInterceptors(new ValidationVocabularyInterceptor(code));
}

/** The validation code the request's route chose with {@link ValidationVocabulary}, if any. */
export function routeValidationCode(request: Request): ValidationCode | undefined {
  return routeCodes.get(request);
}
