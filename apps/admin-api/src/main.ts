import 'reflect-metadata';
import { runMain } from '@broker/bootstrap';
import { ADMIN_API } from './admin-api.server';

/** `npm run start:admin-api`: the admin server alone (point it at PostgreSQL shared with the end-user server). */
void runMain([ADMIN_API]);
