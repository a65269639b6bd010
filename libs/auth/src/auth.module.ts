import type { ServerKind } from '@broker/config';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PrincipalGuard } from './principal.guard';
import { SessionCookieService } from './session-cookie.service';

/**
 * Authentication of one server: the global deny-by-default principal guard, plus the
 * session cookie on the end-user server.
 */
@Module({})
export class AuthModule {
  static forServer(kind: ServerKind): DynamicModule {
    const providers: Provider[] = [{ provide: APP_GUARD, useClass: PrincipalGuard }];
    if (kind === 'enduser') providers.push(SessionCookieService);
    return { module: AuthModule, providers, exports: kind === 'enduser' ? [SessionCookieService] : [] };
  }
}
