import { ApiError } from '@broker/domain';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AdminRoles } from './admin-roles';
import type { BrokerRequest } from './broker-request';
import { CLIENT_AUTHENTICATED_ROUTE, PUBLIC_ROUTE } from './public.decorator';

/** RFC 9110 §9.2.1: the methods that only read. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The admin server's second guard, after the principal guard (same module, so Nest runs it
 * second): a principal that is not an administrator is refused everywhere, a viewer on every
 * unsafe method. Guards run before pipes, so a refused write learns nothing about how its
 * body would have been validated. Public routes (`/health`, `/metrics`) keep their own rules.
 */
@Injectable()
export class AdminRoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly roles: AdminRoles,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    if (this.reflector.getAllAndOverride<boolean>(CLIENT_AUTHENTICATED_ROUTE, targets)) return true;
    const request = context.switchToHttp().getRequest<BrokerRequest>();
    const principal = request.principal;
    // The principal guard has refused a route that needs one; a route that takes none has no role to check.
    if (principal === undefined) return true;
    const role = this.roles.roleOf(principal.id);
    if (role === undefined) throw new ApiError('forbidden', `${principal.id} is not an administrator of this broker`);
    if (role === 'viewer' && !SAFE_METHODS.has(request.method.toUpperCase()))
      throw new ApiError('forbidden', `read-only administrator: ${principal.id} can view but not change anything`);
    return true;
  }
}
