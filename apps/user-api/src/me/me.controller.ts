import { Principal } from '@broker/auth';
import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';

export class UserInfo {
  principal!: string;
  /** The principal unless a display name is known. */
  display_name!: string;
  picture_url!: string | null;
}

export class UserInfoResponse {
  data!: UserInfo;
}

@ApiTags('me')
@ApiSecurity('SessionAuth')
@ApiSecurity('PrincipalHeader')
@Controller('api/me')
export class MeController {
  @Get()
  @ApiOkResponse({ type: UserInfoResponse })
  me(@Principal() principal: Principal): UserInfoResponse {
    return { data: { principal: principal.id, display_name: principal.id, picture_url: null } };
  }
}
