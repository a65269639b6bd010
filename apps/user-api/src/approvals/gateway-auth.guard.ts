import { ApprovalGatewayAuth, type GatewayIdentity } from '@broker/approvals';
import { assertNever } from '@broker/domain';
import { createParamDecorator, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { gatewayHeaders } from './gateway-headers';

/** The credentials a gateway route takes (docs/approvals.md). */
export type GatewayOperation = 'create' | 'consume' | 'sync' | 'authorization_wait';

const GATEWAY_OPERATION = 'broker:gateway-operation';

/** Names the gateway operation of a route, for {@link GatewayAuthGuard}. */
export const GatewayOperation = (operation: GatewayOperation): MethodDecorator =>
  SetMetadata(GATEWAY_OPERATION, operation);

/** The verified identity per request, for {@link Gateway}. */
const identities = new WeakMap<Request, GatewayIdentity>();

/**
 * Verifies a gateway's credentials before anything else of the request is read (before,
 * a bad body got 400 and a good one 401 without credentials, which told an unauthenticated
 * caller how bodies are validated). A guard runs before every interceptor and pipe, so path,
 * query and body are all validated after it. Create: subject token and client assertion;
 * consume: subject token; sync and an authorization request's wait: client assertion. Missing or invalid: 401, refused by an
 * expression: 403.
 */
@Injectable()
export class GatewayAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly gateway: ApprovalGatewayAuth,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const operation = this.reflector.get<GatewayOperation | undefined>(GATEWAY_OPERATION, context.getHandler());
    if (operation === undefined)
      throw new Error(`gateway route ${context.getHandler().name} names no @GatewayOperation`);
    const headers = gatewayHeaders(request);
    switch (operation) {
      case 'create':
        identities.set(request, await this.gateway.forCreate(headers));
        return true;
      case 'consume':
        identities.set(request, await this.gateway.forConsume(headers));
        return true;
      case 'sync':
        await this.gateway.forSync(headers);
        return true;
      case 'authorization_wait':
        await this.gateway.forAuthorizationWait(headers);
        return true;
      default:
        return assertNever(operation, 'gateway operation');
    }
  }
}

/** The subject token's principal and agent, and the gateway, as {@link GatewayAuthGuard} verified them. */
export const Gateway = createParamDecorator((_data: unknown, context: ExecutionContext): GatewayIdentity => {
  const identity = identities.get(context.switchToHttp().getRequest<Request>());
  if (identity === undefined)
    throw new Error('no verified gateway identity: the route needs @GatewayOperation(create or consume)');
  return identity;
});
