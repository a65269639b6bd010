import { EventPageQuery } from '@broker/api-shapes';

/**
 * Query of `GET /api/activity`: cursor pagination and filters, all optional (the ledger's page
 * query, as the admin server's `GET /api/events` takes it); the principal is always the caller.
 */
export class ActivityQuery extends EventPageQuery {}
