import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Controller, Delete, Get, HttpCode, Param } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AuthorizationIdParam } from './authorization-id.param';
import {
  EnterpriseAuthorizationListResponse,
  toEnterpriseAuthorizationResponse,
} from './enterprise-authorization.responses';
import { EnterpriseAuthorizationsService } from './enterprise-authorizations.service';

@ApiTags('consent')
@ApiSecurity('SessionAuth')
@ApiSecurity('PrincipalHeader')
@Controller('api/consent/enterprise-authorizations')
export class EnterpriseAuthorizationsController {
  constructor(private readonly authorizations: EnterpriseAuthorizationsService) {}

  /**
   * What the caller's organisation allowed agents through its identity provider (Identity
   * Assertion JWT Authorization Grants), live ones only, newest first.
   */
  @Get()
  @ApiOkResponse({ type: EnterpriseAuthorizationListResponse })
  async list(@Principal() principal: Principal): Promise<EnterpriseAuthorizationListResponse> {
    return { data: (await this.authorizations.live(principal)).map(toEnterpriseAuthorizationResponse) };
  }

  /**
   * Revokes one of the caller's live enterprise authorizations: its tokens are no longer active
   * on introspection, at once. The organisation's identity provider can allow the agent again (a
   * new assertion starts a new authorization). 404 `not_found` when it is not one of the caller's
   * live authorizations.
   */
  @Delete(':authorizationId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'revoked' })
  @ApiErrors('not_found')
  revoke(@Principal() principal: Principal, @Param() { authorizationId }: AuthorizationIdParam): Promise<void> {
    return this.authorizations.revoke(principal, authorizationId);
  }
}
