import type { Principal as DomainPrincipal } from '@broker/domain';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { BrokerRequest } from './broker-request';

/** The authenticated principal of the request (set by the principal guard). */
export type Principal = DomainPrincipal;

/** Injects the authenticated principal: `revoke(@Principal() p: Principal, ...)`. */
export const Principal = createParamDecorator((_: unknown, context: ExecutionContext): DomainPrincipal => {
  const principal = context.switchToHttp().getRequest<BrokerRequest>().principal;
  // The guard denies by default, so a handler reached without a principal is a wiring bug.
  if (principal === undefined) throw new Error('@Principal() used on a route without principal authentication');
  return principal;
});

/** The principal when one was established, else undefined (routes marked `@OptionalPrincipal()`). */
export const MaybePrincipal = createParamDecorator(
  (_: unknown, context: ExecutionContext): DomainPrincipal | undefined =>
    context.switchToHttp().getRequest<BrokerRequest>().principal,
);
