import type { ServerDefinition } from '@broker/bootstrap';
import { UserApiModule } from './user-api.module';

/** The end-user server as the launcher starts it. */
export const USER_API: ServerDefinition = {
  name: 'end-user',
  kind: 'enduser',
  module: (runtime) => UserApiModule.forRuntime(runtime),
};
