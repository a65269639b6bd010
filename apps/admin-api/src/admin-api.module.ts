import { ApprovalDecisions } from '@broker/approvals';
import { AuditModule } from '@broker/audit';
import { AuthModule } from '@broker/auth';
import { CoreModule, type BrokerRuntime } from '@broker/bootstrap';
import { ERROR_VOCABULARY, HOT_ROUTES } from '@broker/http';
import { OAuthServerModule } from '@broker/oauth-server';
import { VaultModule } from '@broker/vault';
import { WebhooksModule } from '@broker/webhooks';
import { Module, type DynamicModule } from '@nestjs/common';
import { AgentsController } from './agents/agents.controller';
import { AgentsService } from './agents/agents.service';
import { AgentEnterpriseAuthorizationsController } from './agents/enterprise-authorizations.controller';
import { AgentEnterpriseAuthorizationsService } from './agents/enterprise-authorizations.service';
import { ADMIN_ERROR_VOCABULARY } from './common/error-vocabulary';
import { ClientCredentialsController } from './client-credentials/client-credentials.controller';
import { EventsController } from './events/events.controller';
import { EventsService } from './events/events.service';
import { PermissionSetsController } from './permission-sets/permission-sets.controller';
import { PermissionSetsService } from './permission-sets/permission-sets.service';
import { AgentGrantsController } from './grants/agent-grants.controller';
import { AdminGrantsService } from './grants/admin-grants.service';
import { GrantsController } from './grants/grants.controller';
import { MeController } from './me/me.controller';
import { MetricsController } from './metrics/metrics.controller';
import { OverviewController } from './overview/overview.controller';
import { OverviewService } from './overview/overview.service';
import { MetricsScrape } from './metrics/metrics-scrape.service';
import { IssuerDiscovery } from './services/issuer-discovery';
import { ServicesController } from './services/services.controller';
import { ServicesService } from './services/services.service';
import { ResourcesController } from './resources/resources.controller';
import { ResourcesService } from './resources/resources.service';
import { SigningKeysController } from './signing-keys/signing-keys.controller';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksService } from './webhooks/webhooks.service';

/**
 * The admin server (port 14000): agents, services, protected resources, permission sets, client credentials,
 * signing keys, `/health` and `/metrics` (trusted sources only, no principal). Every other
 * route needs the principal header, and a role from `server.admin.authorization` (viewers
 * read only; docs/admin-api.md "Roles").
 */
@Module({})
export class AdminApiModule {
  static forRuntime(runtime: BrokerRuntime): DynamicModule {
    return {
      module: AdminApiModule,
      imports: [
        CoreModule.forRuntime(runtime, 'admin'),
        AuthModule.forServer('admin'),
        AuditModule,
        VaultModule,
        OAuthServerModule,
        WebhooksModule,
      ],
      controllers: [
        MeController,
        OverviewController,
        AgentsController,
        AgentEnterpriseAuthorizationsController,
        AgentGrantsController,
        GrantsController,
        ServicesController,
        ResourcesController,
        PermissionSetsController,
        ClientCredentialsController,
        SigningKeysController,
        MetricsController,
        EventsController,
        WebhooksController,
      ],
      // No hot routes: the admin plane takes the ordinary pipeline.
      providers: [
        OverviewService,
        AdminGrantsService,
        // The person's grant revocation ends their remembered tool decisions with it (docs/approvals.md "Grants and
        // approvals"); only this piece of the approvals library, not its gateway sync.
        ApprovalDecisions,
        EventsService,
        AgentsService,
        AgentEnterpriseAuthorizationsService,
        ServicesService,
        ResourcesService,
        PermissionSetsService,
        IssuerDiscovery,
        MetricsScrape,
        WebhooksService,
        { provide: ERROR_VOCABULARY, useValue: ADMIN_ERROR_VOCABULARY },
        { provide: HOT_ROUTES, useValue: [] },
      ],
    };
  }
}
