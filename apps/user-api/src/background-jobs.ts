import { ExpirySweeper } from '@broker/approvals';
import { AuthorizationCodePurge } from '@broker/oauth-server';
import { EventRetention } from '@broker/events';
import { DpopProofReplayRetention, RefreshTokenRetention, RevokedAccessTokenRetention } from '@broker/persistence';
import { ProactiveRefreshSweeper } from '@broker/vault';
import { WebhookDeliveryRetention, WebhookDeliveryWorker } from '@broker/webhooks';
import { AuthorizationRequestExpiry } from './authorization-requests/authorization-request-expiry';

/**
 * Every background job of the broker, in one place. The end-user server runs them all (its
 * `JobRunner` starts them once the server has started and stops them at shutdown); the admin
 * server runs none, so a process running only the admin server does no background work. Each
 * process with an end-user server (every replica, every cluster worker) runs one instance of
 * each, and the jobs are written for that: claims skip rows another process holds, updates
 * are conditional, purges delete only what is still there.
 *
 * | job | what it does | when |
 * | --- | --- | --- |
 * | `EventRetention` | deletes events older than `events.retention` | 1 min after start, then hourly |
 * | `RevokedAccessTokenRetention` | deletes revocations of expired access tokens | 1 min after start, then hourly |
 * | `DpopProofReplayRetention` | deletes the replay records of DPoP proofs that can no longer be accepted | 1 min after start, then every minute |
 * | `RefreshTokenRetention` | deletes refresh token families past their absolute expiry | 1 min after start, then hourly |
 * | `WebhookDeliveryRetention` | deletes finished deliveries older than `events.webhooks.delivery_retention` | 1 min after start, then hourly |
 * | `AuthorizationCodePurge` | deletes authorization codes that expired unredeemed | 10 s after start, then every 5 min |
 * | `ExpirySweeper` | expires pending approval requests and one-time denials when their time is up (a change gateways hear) | at start, then at the next expiry (re-read after every change) |
 * | `AuthorizationRequestExpiry` | ends the authorization requests nobody answered before their expiry (`authorization_request.expired`; when `authorization_requests.enabled`) | every 30 s |
 * | `ProactiveRefreshSweeper` | refreshes third-party access tokens before they expire (`token_refresh.proactive`, when enabled) | every `token_refresh.proactive.interval` |
 * | `WebhookDeliveryWorker` | delivers the webhook outbox (when `events.enabled`) | every second, and as soon as an attempt ends |
 */
export const END_USER_SERVER_JOBS = [
  EventRetention,
  RevokedAccessTokenRetention,
  DpopProofReplayRetention,
  RefreshTokenRetention,
  WebhookDeliveryRetention,
  AuthorizationCodePurge,
  ExpirySweeper,
  AuthorizationRequestExpiry,
  ProactiveRefreshSweeper,
  WebhookDeliveryWorker,
] as const;
