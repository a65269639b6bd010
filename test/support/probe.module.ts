import { Principal, Public } from '@broker/auth';
import type { ServerDefinition, BrokerRuntime } from '@broker/bootstrap';
import { Body, Controller, Delete, Get, Module, Param, Post, type DynamicModule } from '@nestjs/common';
import { IsString, IsUUID, Length } from 'class-validator';
import { AdminApiModule } from '../../apps/admin-api/src/admin-api.module';
import { UserApiModule } from '../../apps/user-api/src/user-api.module';

export const BOOM_DETAIL = 'probe failure detail that must stay in the log';

class EchoDto {
  @IsString()
  @Length(1, 10)
  name!: string;
}

class ItemParams {
  @IsUUID('all')
  id!: string;
}

/** Test-only routes that exercise the real pipes, guard and filters. */
@Controller('api/probe')
class ProbeController {
  @Post('echo')
  echo(@Body() body: EchoDto): { data: EchoDto } {
    return { data: body };
  }

  @Get('whoami')
  whoami(@Principal() principal: Principal): { data: Principal } {
    return { data: principal };
  }

  @Delete('thing')
  remove(@Principal() principal: Principal): { data: { removed_by: string } } {
    return { data: { removed_by: principal.id } };
  }

  @Get('items/:id')
  item(@Param() params: ItemParams): { data: ItemParams } {
    return { data: params };
  }

  @Public()
  @Get('boom')
  boom(): never {
    throw new Error(BOOM_DETAIL);
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

@Module({})
class ProbedUserApi {
  static forRuntime(runtime: BrokerRuntime): DynamicModule {
    return { module: ProbedUserApi, imports: [UserApiModule.forRuntime(runtime), ProbeModule] };
  }
}

@Module({})
class ProbedAdminApi {
  static forRuntime(runtime: BrokerRuntime): DynamicModule {
    return { module: ProbedAdminApi, imports: [AdminApiModule.forRuntime(runtime), ProbeModule] };
  }
}

/** The real servers plus the probe routes. */
export const PROBED_SERVERS: ServerDefinition[] = [
  { name: 'end-user', kind: 'enduser', module: (runtime) => ProbedUserApi.forRuntime(runtime) },
  { name: 'admin', kind: 'admin', module: (runtime) => ProbedAdminApi.forRuntime(runtime) },
];
