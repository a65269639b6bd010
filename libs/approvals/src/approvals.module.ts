import { AuditModule } from '@broker/audit';
import { OAuthServerModule } from '@broker/oauth-server';
import { Module } from '@nestjs/common';
import { CibaRequests } from './ciba/ciba-requests.service';
import { ApprovalDecisions } from './decisions/approval-decisions.service';
import { ApprovalGatewayAuth } from './gateway/approval-gateway-auth';
import { ApprovalPages } from './approval-pages';
import { ApprovalRequests } from './requests/approval-requests.service';
import { ApprovalSync } from './sync/approval-sync.service';
import { ExpirySweeper } from './sync/expiry-sweeper';
import { LongPollHub } from './sync/long-poll-hub';

/**
 * Tool approvals (docs/approvals.md): the gateway side (create, consume,
 * long-poll sync) and the user side (list, decide, preview, revoke). The gateway's JWTs are
 * verified by `GatewayCredentials` of `@broker/oauth-server`, the very instance the token
 * exchange uses (one key set and verified-token cache).
 */
@Module({
  imports: [AuditModule, OAuthServerModule],
  providers: [
    ApprovalGatewayAuth,
    ApprovalPages,
    LongPollHub,
    ExpirySweeper,
    ApprovalRequests,
    ApprovalDecisions,
    ApprovalSync,
    CibaRequests,
  ],
  exports: [
    ApprovalGatewayAuth,
    ApprovalPages,
    ApprovalRequests,
    ApprovalDecisions,
    ApprovalSync,
    LongPollHub,
    ExpirySweeper,
    CibaRequests,
  ],
})
export class ApprovalsModule {}
