import { ApprovalsModule } from '@broker/approvals';
import { AuditModule } from '@broker/audit';
import { AuthModule } from '@broker/auth';
import { backgroundJobProviders, CoreModule, type BrokerRuntime } from '@broker/bootstrap';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ERROR_VOCABULARY, HOT_ROUTES } from '@broker/http';
import { AuthorizationCodePurge, OAuthServerModule } from '@broker/oauth-server';
import { VaultModule } from '@broker/vault';
import { WebhooksModule } from '@broker/webhooks';
import { Module, type DynamicModule } from '@nestjs/common';
import { ActivityNamesController } from './activity/activity-names.controller';
import { ActivityNamesService } from './activity/activity-names.service';
import { ActivityController } from './activity/activity.controller';
import { ActivityService } from './activity/activity.service';
import { END_USER_SERVER_JOBS } from './background-jobs';
import { EnterpriseAuthorizationsController } from './enterprise/enterprise-authorizations.controller';
import { EnterpriseAuthorizationsService } from './enterprise/enterprise-authorizations.service';
import { LastUsedController } from './activity/last-used.controller';
import { ApprovalsGatewayController } from './approvals/approvals-gateway.controller';
import { ApprovalsController } from './approvals/approvals.controller';
import { USER_ERROR_VOCABULARY } from './common/error-vocabulary';
import { ApprovalsShutdown } from './approvals/approvals-shutdown';
import { AuthorizationRequestExpiry } from './authorization-requests/authorization-request-expiry';
import { AuthorizationRequestWait } from './authorization-requests/authorization-request-wait';
import { AuthorizationRequestsGatewayController } from './authorization-requests/authorization-requests-gateway.controller';
import { AuthorizationRequestsController } from './authorization-requests/authorization-requests.controller';
import { AuthorizationRequestsService } from './authorization-requests/authorization-requests.service';
import { AuthorizationSessionAnswers } from './consent/authorization-session-answers';
import { AuthorizationSessionReader } from './consent/authorization-session.reader';
import { ConsentController } from './consent/consent.controller';
import { ConsentService } from './consent/consent.service';
import { GrantsController } from './grants/grants.controller';
import { GrantsService } from './grants/grants.service';
import { MeController } from './me/me.controller';
import { OAuth2Controller } from './oauth2/oauth2.controller';
import { BackchannelAuthenticationController } from './oauth2/backchannel-authentication.controller';
import { BackchannelAuthenticationHotRoute } from './oauth2/bc-authorize.hot-route';
import { CibaRequestsBinding } from './oauth2/ciba-requests.binding';
import { JwksHotRoute } from './oauth2/jwks.hot-route';
import { TokenHotRoute } from './oauth2/token.hot-route';
import { TokenLifecycleController } from './oauth2/token-lifecycle.controller';
import { IntrospectionHotRoute, RevocationHotRoute } from './oauth2/token-lifecycle.hot-routes';
import { ConnectService } from './third-party/connect.service';
import { SessionsService } from './third-party/sessions.service';
import { ThirdPartyController } from './third-party/third-party.controller';

/**
 * The end-user server (port 8000): consent, grants, third-party sessions, approvals,
 * `/oauth2/*`, `/.well-known/*` and `/health`.
 */
@Module({})
export class UserApiModule {
  static forRuntime(runtime: BrokerRuntime): DynamicModule {
    return {
      module: UserApiModule,
      imports: [
        CoreModule.forRuntime(runtime, 'enduser'),
        AuthModule.forServer('enduser'),
        AuditModule,
        VaultModule,
        OAuthServerModule,
        ApprovalsModule,
        CibaRequestsBinding,
        WebhooksModule,
      ],
      controllers: [
        MeController,
        ConsentController,
        EnterpriseAuthorizationsController,
        GrantsController,
        ThirdPartyController,
        OAuth2Controller,
        BackchannelAuthenticationController,
        TokenLifecycleController,
        ApprovalsGatewayController,
        ApprovalsController,
        AuthorizationRequestsGatewayController,
        AuthorizationRequestsController,
        ActivityController,
        ActivityNamesController,
        LastUsedController,
      ],
      providers: [
        ...[
          ActivityService,
          ActivityNamesService,
          ApprovalsShutdown,
          AuthorizationRequestsService,
          AuthorizationRequestWait,
          AuthorizationRequestExpiry,
          AuthorizationCodePurge,
          ConsentService,
          EnterpriseAuthorizationsService,
          GrantsService,
          AuthorizationSessionReader,
          AuthorizationSessionAnswers,
          ConnectService,
          SessionsService,
        ],
        { provide: ERROR_VOCABULARY, useValue: USER_ERROR_VOCABULARY },
        ...backgroundJobProviders(END_USER_SERVER_JOBS),
        ...[TokenHotRoute, JwksHotRoute, RevocationHotRoute, IntrospectionHotRoute, BackchannelAuthenticationHotRoute],
        {
          provide: HOT_ROUTES,
          useFactory: (
            config: BrokerConfig,
            token: TokenHotRoute,
            jwks: JwksHotRoute,
            revoke: RevocationHotRoute,
            introspect: IntrospectionHotRoute,
            backchannel: BackchannelAuthenticationHotRoute,
          ) => [
            token,
            jwks,
            revoke,
            introspect,
            // OpenID CIBA Core 1.0 §7: only when enabled (otherwise the route is unknown, 404).
            ...(config.oauth2_authorization_server.ciba.enabled ? [backchannel] : []),
          ],
          inject: [
            BROKER_CONFIG,
            TokenHotRoute,
            JwksHotRoute,
            RevocationHotRoute,
            IntrospectionHotRoute,
            BackchannelAuthenticationHotRoute,
          ],
        },
      ],
    };
  }
}
