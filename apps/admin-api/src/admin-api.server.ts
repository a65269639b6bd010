import type { ServerDefinition } from '@broker/bootstrap';
import { AdminApiModule } from './admin-api.module';

/** The admin server as the launcher starts it. */
export const ADMIN_API: ServerDefinition = {
  name: 'admin',
  kind: 'admin',
  module: (runtime) => AdminApiModule.forRuntime(runtime),
};
