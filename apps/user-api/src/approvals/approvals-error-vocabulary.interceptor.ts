import { ApiError } from '@broker/domain';
import { RequestValidationError } from '@broker/http';
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { catchError, type Observable } from 'rxjs';

/**
 * API.md "Tool approvals": validation failures of the approvals API are 400 `bad request`
 * (tool_name over 255, missing fields), for the body too, where the rest of the end-user
 * API says `invalid request`. Gateways are written against that code, so it is kept here.
 */
@Injectable()
export class ApprovalsErrorVocabulary implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (error instanceof RequestValidationError) {
          throw new ApiError('bad request', error.message, error.issues.map(({ field, problem }) => ({ field, problem })));
        }
        throw error;
      }),
    );
  }
}
