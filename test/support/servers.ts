import type { ServerDefinition } from '@broker/bootstrap';
import { ADMIN_API } from '../../apps/admin-api/src/admin-api.server';
import { USER_API } from '../../apps/user-api/src/user-api.server';

/** Both real servers, as `npm start` runs them. */
export const BOTH_SERVERS: ServerDefinition[] = [USER_API, ADMIN_API];
