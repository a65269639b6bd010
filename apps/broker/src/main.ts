import 'reflect-metadata';
import { runMain } from '@broker/bootstrap';
import { ADMIN_API } from '../../admin-api/src/admin-api.server';
import { USER_API } from '../../user-api/src/user-api.server';

/**
 * `npm start`: both servers in one process on one database. This composition root is
 * the only place that names both applications; the applications never import each other.
 */
void runMain([USER_API, ADMIN_API]);
