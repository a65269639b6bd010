import { Clock } from '@broker/domain';
import type { Provider } from '@nestjs/common';
import { Database } from '../database';
import { AgentRepository } from './agent.repository';
import { AuthorizationCodeRepository } from './authorization-code.repository';
import { AuthorizationSessionAnswerRepository } from './authorization-session-answer.repository';
import { ClientAssertionReplayRepository, DpopProofReplayRepository } from './replay-records.repository';
import { ClientCredentialRepository } from './client-credential.repository';
import { EnterpriseAuthorizationRepository } from './enterprise-authorization.repository';
import { EnvelopeStore } from './envelope-store';
import { ExchangeLookup } from './exchange-lookup';
import { GrantClientRepository } from './grant-client.repository';
import { GrantRepository } from './grant.repository';
import { PermissionSetRepository } from './permission-set.repository';
import { ProtectedResourceRepository } from './protected-resource.repository';
import { RefreshTokenRepository } from './refresh-token.repository';
import { ServiceRepository } from './service.repository';
import { SessionRepository } from './session.repository';
import { SigningKeyRepository } from './signing-key.repository';
import { TokenStateRepository } from './token-state.repository';
import { EventRepository } from '../events/event.repository';
import { WebhookDeliveryRepository } from '../webhooks/webhook-delivery.repository';
import { WebhookRepository } from '../webhooks/webhook.repository';

type RepositoryClass = new (dataSource: Database['dataSource'], backend: Database['backend']) => object;

const REPOSITORIES: RepositoryClass[] = [
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
];

/**
 * Each repository built on the process's database. The two that touch the client cache get
 * the process's one cache from the `Database` (both servers share it; no static registry),
 * the token exchange's lookup its context cache.
 */
export const REPOSITORY_PROVIDERS: Provider[] = [
  ...REPOSITORIES.map((repository) => ({
    provide: repository,
    useFactory: (database: Database) => new repository(database.dataSource, database.backend),
    inject: [Database],
  })),
  {
    provide: AgentRepository,
    useFactory: (database: Database, clock: Clock) =>
      new AgentRepository(database.dataSource, database.clientCache, database.registryChanges, clock),
    inject: [Database, Clock],
  },
  {
    provide: ExchangeLookup,
    useFactory: (database: Database) => new ExchangeLookup(database.dataSource, database.exchangeCache),
    inject: [Database],
  },
  {
    provide: TokenStateRepository,
    useFactory: (database: Database) => new TokenStateRepository(database.dataSource, database.tokenState),
    inject: [Database],
  },
  {
    provide: ProtectedResourceRepository,
    useFactory: (database: Database) =>
      new ProtectedResourceRepository(database.dataSource, database.resourceCatalog, database.registryChanges),
    inject: [Database],
  },
  {
    provide: ClientCredentialRepository,
    useFactory: (database: Database) => new ClientCredentialRepository(database.dataSource, database.clientCache),
    inject: [Database],
  },
];

export const REPOSITORY_TOKENS = [
  ...REPOSITORIES,
  AgentRepository,
  ExchangeLookup,
  ClientCredentialRepository,
  TokenStateRepository,
  ProtectedResourceRepository,
];
