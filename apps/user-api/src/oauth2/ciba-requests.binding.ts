import { ApprovalsModule, CibaRequests } from '@broker/approvals';
import { CIBA_REQUESTS, type CibaRequestsPort } from '@broker/oauth-server';
import { Global, Module } from '@nestjs/common';

/**
 * Binds the approval engine (`CibaRequests`) to the authorization server's `CIBA_REQUESTS`
 * port: the approvals library sits above the authorization server, so the CIBA endpoint and
 * grant reach it through this binding of the end-user server (the only one serving them).
 */
@Global()
@Module({
  imports: [ApprovalsModule],
  providers: [
    {
      provide: CIBA_REQUESTS,
      inject: [CibaRequests],
      useFactory: (requests: CibaRequests): CibaRequestsPort => requests,
    },
  ],
  exports: [CIBA_REQUESTS],
})
export class CibaRequestsBinding {}
