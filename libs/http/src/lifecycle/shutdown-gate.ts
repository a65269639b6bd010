import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@broker/domain';
import type { NextFunction, Request, Response } from 'express';
import type { Lifecycle } from './lifecycle';

/**
 * The shutdown step of every request, on both entrances (the Nest pipeline's middleware
 * and the hot routes): counts the request as in flight, or, once the process is shutting
 * down, marks the answer `Connection: close` and returns the error to answer with (503
 * through the error envelope of the path). The health probe is let through during
 * shutdown: it must report `shutting_down` itself (docs/operating.md).
 *
 * @returns undefined when the request is admitted, else the refusal to answer with.
 */
export function refuseDuringShutdown(
  lifecycle: Lifecycle,
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
): ApiError | undefined {
  if (lifecycle.track(request, response) || path === '/health') return undefined;
  // A draining process takes no new work on this connection: the client reconnects elsewhere.
  response.setHeader('Connection', 'close');
  return new ApiError('service unavailable', 'the server is shutting down');
}

/** Express middleware of `refuseDuringShutdown`: a refusal goes to the error envelope filter. */
export function shutdownGate(lifecycle: Lifecycle) {
  return (request: Request, response: Response, next: NextFunction): void => {
    next(refuseDuringShutdown(lifecycle, request, response, request.path));
  };
}
