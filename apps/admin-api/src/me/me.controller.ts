import { AdminRoles, Principal } from '@broker/auth';
import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { MeResponse } from './me.response';

@ApiTags('me')
@ApiSecurity('PrincipalHeader')
@Controller('api/me')
export class MeController {
  constructor(private readonly roles: AdminRoles) {}

  /** The signed-in administrator and their role (docs/admin-api.md "Roles"). */
  @Get()
  @ApiOkResponse({ type: MeResponse })
  me(@Principal() principal: Principal): MeResponse {
    // The role guard has already refused a principal without a role.
    return { principal: principal.id, role: this.roles.roleOf(principal.id) ?? 'viewer' };
  }
}
