import type { Provider } from '@nestjs/common';
import type { Database } from '../database';
import { EventRepository } from '../events/event.repository';
import { STORAGE_BACKEND } from '../persistence.tokens';
import { WebhookDeliveryRepository } from '../webhooks/webhook-delivery.repository';
import { WebhookRepository } from '../webhooks/webhook.repository';
import { AdminGrantRepository } from './admin-grant.repository';
import { AgentRepository } from './agent.repository';
import { AuthorizationCodeRepository } from './authorization-code.repository';
import { AuthorizationSessionAnswerRepository } from './authorization-session-answer.repository';
import { ClientCache } from './client-cache';
import { ClientCredentialRepository } from './client-credential.repository';
import { EnterpriseAuthorizationRepository } from './enterprise-authorization.repository';
import { EnvelopeStore } from './envelope-store';
import { ExchangeChanges } from './exchange-changes';
import { ExchangeContextCache } from './exchange-context-cache';
import { ExchangeLookup } from './exchange-lookup';
import { GrantClientRepository } from './grant-client.repository';
import { GrantRepository } from './grant.repository';
import { PermissionSetRepository } from './permission-set.repository';
import { ProtectedResourceRepository } from './protected-resource.repository';
import { RefreshTokenRepository } from './refresh-token.repository';
import { RegistryCountsRepository } from './registry-counts.repository';
import { ClientAssertionReplayRepository, DpopProofReplayRepository } from './replay-records.repository';
import { ResourceCatalog } from './resource-catalog';
import { ServiceRepository } from './service.repository';
import { SessionRepository } from './session.repository';
import { SigningKeyRepository } from './signing-key.repository';
import { TokenStateCache } from './token-state-cache';
import { TokenStateRepository } from './token-state.repository';

/** The repositories, built by Nest's injector on the data source `TypeOrmModule` provides. */
export const REPOSITORIES = [
  ServiceRepository,
  PermissionSetRepository,
  SigningKeyRepository,
  GrantRepository,
  GrantClientRepository,
  SessionRepository,
  EnvelopeStore,
  AuthorizationCodeRepository,
  ClientAssertionReplayRepository,
  DpopProofReplayRepository,
  EnterpriseAuthorizationRepository,
  AuthorizationSessionAnswerRepository,
  RefreshTokenRepository,
  EventRepository,
  WebhookRepository,
  WebhookDeliveryRepository,
  AgentRepository,
  ExchangeLookup,
  ClientCredentialRepository,
  TokenStateRepository,
  ProtectedResourceRepository,
  RegistryCountsRepository,
  AdminGrantRepository,
];

/**
 * What the repositories take from the process rather than from one application: the storage
 * backend and the caches, one per process so that a write through either server clears what
 * the other reads. The token exchange's two caches exist only while a notification connection
 * can keep them right (PostgreSQL); on PGlite they are not provided and their readers
 * (`@Optional()`) go to the database every time.
 */
export function processProviders(database: Database): Provider[] {
  const { exchangeCache, tokenState } = database;
  return [
    { provide: STORAGE_BACKEND, useValue: database.backend },
    { provide: ClientCache, useValue: database.clientCache },
    { provide: ResourceCatalog, useValue: database.resourceCatalog },
    ...(exchangeCache === undefined ? [] : [{ provide: ExchangeContextCache, useValue: exchangeCache }]),
    ...(tokenState === undefined ? [] : [{ provide: TokenStateCache, useValue: tokenState }]),
    // What the grant, session, service and agent writes tell both caches after their commit.
    { provide: ExchangeChanges, useValue: new ExchangeChanges(exchangeCache, tokenState) },
  ];
}
