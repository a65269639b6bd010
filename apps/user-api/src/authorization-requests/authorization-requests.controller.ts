import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiParam, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AllowAuthorizationRequestDto } from './allow-authorization-request.dto';
import { AuthorizationRequestResponse, toAuthorizationRequestView } from './authorization-request.response';
import { AuthorizationRequestsService } from './authorization-requests.service';

const ID = { name: 'id', description: 'the authorization request (a malformed id is 404 like an unknown one)' };

/**
 * The person's side of authorization requests (docs/authorization-requests.md): the link a
 * refused token exchange carried. Only the person it was made for can act on it; another
 * person gets 403 and changes nothing.
 */
@ApiTags('authorization-requests')
@Controller('api/authorization-requests')
@ApiSecurity('PrincipalHeader')
export class AuthorizationRequestsController {
  constructor(private readonly requests: AuthorizationRequestsService) {}

  /** Reads a request in any state (pending, completed, denied, expired), so the page can say what happened. */
  @Get(':id')
  @ApiParam(ID)
  @ApiOkResponse({ type: AuthorizationRequestResponse })
  @ApiErrors('not_found', 'forbidden')
  async get(@Principal() principal: Principal, @Param('id') id: string): Promise<AuthorizationRequestResponse> {
    return { data: toAuthorizationRequestView(await this.requests.view(principal, id)) };
  }

  /**
   * Allows the request: writes the grant (the agent's existing delegations plus this
   * service), then `completed` when the connection to the service is usable, else still
   * `pending` at step `connect`. 409 once answered, 410 once expired.
   */
  @Post(':id/allow')
  @HttpCode(200)
  @ApiParam(ID)
  @ApiBody({ type: AllowAuthorizationRequestDto, required: false })
  @ApiOkResponse({ type: AuthorizationRequestResponse })
  @ApiErrors('not_found', 'forbidden', 'conflict', 'gone', 'invalid_permission_set', 'invalid scopes')
  async allow(
    @Principal() principal: Principal,
    @Param('id') id: string,
    @Body() body: AllowAuthorizationRequestDto,
  ): Promise<AuthorizationRequestResponse> {
    return { data: toAuthorizationRequestView(await this.requests.allow(principal, id, body?.valid_until)) };
  }

  /** Denies the request; the waiting gateway learns `denied`. 409 once answered, 410 once expired. */
  @Post(':id/deny')
  @NoBody()
  @HttpCode(200)
  @ApiParam(ID)
  @ApiOkResponse({ type: AuthorizationRequestResponse })
  @ApiErrors('not_found', 'forbidden', 'conflict', 'gone')
  async deny(@Principal() principal: Principal, @Param('id') id: string): Promise<AuthorizationRequestResponse> {
    return { data: toAuthorizationRequestView(await this.requests.deny(principal, id)) };
  }
}
