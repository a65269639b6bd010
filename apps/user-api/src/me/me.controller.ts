import { Principal } from '@broker/auth';
import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { toUserInfoResponse, UserInfoResponse } from './user-info.response';

@ApiTags('me')
@ApiSecurity('SessionAuth')
@ApiSecurity('PrincipalHeader')
@Controller('api/me')
export class MeController {
  /** The caller's principal, display name and picture. */
  @Get()
  @ApiOkResponse({ type: UserInfoResponse })
  me(@Principal() principal: Principal): UserInfoResponse {
    return toUserInfoResponse(principal);
  }
}
