import { Installation1763780000000 } from './1763780000000-installation';
import { AdminRegistry1763790000000 } from './1763790000000-admin-registry';
import { GrantsAndSessions1763800000000 } from './1763800000000-grants-and-sessions';
import { SessionReauthentication1763810000000 } from './1763810000000-session-reauthentication';
import { AuthorizationCodes1763820000000 } from './1763820000000-authorization-codes';
import { ToolApprovals1763835000000 } from './1763835000000-tool-approvals';
import { RegistryNotifications1763845000000 } from './1763845000000-registry-notifications';
import { ClientAssertionReplays1763855000000 } from './1763855000000-client-assertion-replays';
import { SessionVersion1763865000000 } from './1763865000000-session-version';
import { AuthorizationCodeResources1763875000000 } from './1763875000000-authorization-code-resources';
import { AgentAllowedResources1763885000000 } from './1763885000000-agent-allowed-resources';
import { SessionRefreshClaim1763895000000 } from './1763895000000-session-refresh-claim';
import { EventLedger1763905000000 } from './1763905000000-event-ledger';
import { Webhooks1763915000000 } from './1763915000000-webhooks';
import { GrantClients1764100000000 } from './1764100000000-grant-clients';
import { AuthorizationSessionAnswers1764110000000 } from './1764110000000-authorization-session-answers';
import { WebhookDeliveryClaims1764120000000 } from './1764120000000-webhook-delivery-claims';
import { ActivityIndexes1764130000000 } from './1764130000000-activity-indexes';
import { ExchangeNotifications1764140000000 } from './1764140000000-exchange-notifications';
import { RefreshTokens1764150000000 } from './1764150000000-refresh-tokens';
import { RefreshTokenClients1764155000000 } from './1764155000000-refresh-token-clients';
import { RefreshTokenWritePath1764165000000 } from './1764165000000-refresh-token-write-path';
import { TokenRevocation1764160000000 } from './1764160000000-token-revocation';
import { ProtectedResources1764170000000 } from './1764170000000-protected-resources';
import { AgentDpopPolicy1764180000000 } from './1764180000000-agent-dpop-policy';
import { Dpop1764185000000 } from './1764185000000-dpop';
import { EnterpriseAuthorizations1764190000000 } from './1764190000000-enterprise-authorizations';
import { RefreshTokenFamilies1764200000000 } from './1764200000000-refresh-token-families';
import { AuthorizationRequests1764210000000 } from './1764210000000-authorization-requests';
import { AgentSuspension1764220000000 } from './1764220000000-agent-suspension';
import { AdminActionIndex1764230000000 } from './1764230000000-admin-action-index';
import { CibaApprovals1764240000000 } from './1764240000000-ciba-approvals';

/** Every migration, oldest first. A schema change is a new file appended here. */
export const MIGRATIONS = [
  Installation1763780000000,
  AdminRegistry1763790000000,
  GrantsAndSessions1763800000000,
  SessionReauthentication1763810000000,
  AuthorizationCodes1763820000000,
  ToolApprovals1763835000000,
  RegistryNotifications1763845000000,
  ClientAssertionReplays1763855000000,
  SessionVersion1763865000000,
  AuthorizationCodeResources1763875000000,
  AgentAllowedResources1763885000000,
  SessionRefreshClaim1763895000000,
  EventLedger1763905000000,
  Webhooks1763915000000,
  GrantClients1764100000000,
  AuthorizationSessionAnswers1764110000000,
  WebhookDeliveryClaims1764120000000,
  ActivityIndexes1764130000000,
  ExchangeNotifications1764140000000,
  RefreshTokens1764150000000,
  RefreshTokenClients1764155000000,
  TokenRevocation1764160000000,
  RefreshTokenWritePath1764165000000,
  ProtectedResources1764170000000,
  AgentDpopPolicy1764180000000,
  Dpop1764185000000,
  EnterpriseAuthorizations1764190000000,
  RefreshTokenFamilies1764200000000,
  AuthorizationRequests1764210000000,
  AgentSuspension1764220000000,
  AdminActionIndex1764230000000,
  CibaApprovals1764240000000,
];
