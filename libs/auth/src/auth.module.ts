import type { ServerKind } from '@broker/config';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdminRoleGuard } from './admin-role.guard';
import { AdminRoles } from './admin-roles';
import { PrincipalGuard } from './principal.guard';
import { SessionCookieService } from './session-cookie.service';

/**
 * Authentication of one server: the global deny-by-default principal guard, plus the
 * session cookie on the end-user server, and on the admin server the role guard
 * (`server.admin.authorization`), registered after the principal guard so it runs second.
 */
@Module({})
export class AuthModule {
  static forServer(kind: ServerKind): DynamicModule {
    const providers: Provider[] = [{ provide: APP_GUARD, useClass: PrincipalGuard }];
    if (kind === 'enduser') {
      providers.push(SessionCookieService);
      return { module: AuthModule, providers, exports: [SessionCookieService] };
    }
    providers.push(AdminRoles, { provide: APP_GUARD, useClass: AdminRoleGuard });
    return { module: AuthModule, providers, exports: [AdminRoles] };
  }
}
