import { AuditModule } from '@broker/audit';
import { AuthModule } from '@broker/auth';
import { CoreModule, type BrokerRuntime } from '@broker/http';
import { OAuthServerModule } from '@broker/oauth-server';
import { Module, type DynamicModule } from '@nestjs/common';

/**
 * The end-user server (port 8000): consent, grants, third-party sessions, approvals,
 * `/oauth2/*`, `/.well-known/*` and `/health`.
 */
@Module({})
export class UserApiModule {
  static forRuntime(runtime: BrokerRuntime): DynamicModule {
    return {
      module: UserApiModule,
      imports: [CoreModule.forRuntime(runtime, 'enduser'), AuthModule.forServer('enduser'), AuditModule, OAuthServerModule],
    };
  }
}
