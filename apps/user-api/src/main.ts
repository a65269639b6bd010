import 'reflect-metadata';
import { runMain } from '@broker/bootstrap';
import { USER_API } from './user-api.server';

/** `npm run start:user-api`: the end-user server alone (point it at PostgreSQL shared with the admin server). */
void runMain([USER_API]);
