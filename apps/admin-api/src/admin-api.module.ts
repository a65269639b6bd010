import { AuditModule } from '@broker/audit';
import { AuthModule } from '@broker/auth';
import { CoreModule, type BrokerRuntime } from '@broker/http';
import { Module, type DynamicModule } from '@nestjs/common';

/**
 * The admin server (port 14000): agents, services, permission sets, client credentials,
 * signing keys and `/health`. Every route needs the principal header; the proxy in
 * front enforces administrator privilege.
 */
@Module({})
export class AdminApiModule {
  static forRuntime(runtime: BrokerRuntime): DynamicModule {
    return {
      module: AdminApiModule,
      imports: [CoreModule.forRuntime(runtime, 'admin'), AuthModule.forServer('admin'), AuditModule],
    };
  }
}
