import type { CrossSiteRequestPolicy } from '@broker/auth';
import type { NextFunction, Request, Response } from 'express';

/**
 * Refuses an unsafe request from a foreign page (`CrossSiteRequestPolicy`) before body
 * parsing, routing, guards or handlers, so a refused request changes nothing, whatever
 * would have authenticated it and whether or not its route uses a principal. `skip`
 * names the routes that are cross-origin by design (the OAuth2 endpoints).
 */
export function crossSiteMiddleware(policy: CrossSiteRequestPolicy, skip: (request: Request) => boolean) {
  return (request: Request, _response: Response, next: NextFunction): void => {
    if (skip(request)) {
      next();
      return;
    }
    try {
      policy.assertAllowed(request.method, request.headers);
    } catch (error) {
      next(error);
      return;
    }
    next();
  };
}
