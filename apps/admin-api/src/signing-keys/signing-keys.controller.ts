import { SIGNING_ALGORITHMS, type SigningAlgorithm } from '@broker/domain';
import { SigningKeyService } from '@broker/oauth-server';
import type { SigningKeyRecord } from '@broker/persistence';
import { NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { KidParam } from '../common/id-params';

export class AddSigningKeyDto {
  /** ES256 (default), RS256 or EdDSA. */
  @IsOptional()
  @IsIn(SIGNING_ALGORITHMS)
  algorithm?: SigningAlgorithm;
}

export class SigningKeyResponse {
  kid!: string;
  algorithm!: SigningAlgorithm;
  is_current!: boolean;
  created_at!: string;
  deleted_at!: string | null;
}

export class SigningKeyListResponse {
  items!: SigningKeyResponse[];
}

function toSigningKeyResponse(key: SigningKeyRecord): SigningKeyResponse {
  return { kid: key.kid, algorithm: key.algorithm, is_current: key.isCurrent, created_at: key.createdAt.toISOString(), deleted_at: key.deletedAt?.toISOString() ?? null };
}

@ApiTags('signing-keys')
@ApiSecurity('PrincipalHeader')
@Controller('api/oauth2-server/signing-keys')
export class SigningKeysController {
  constructor(private readonly keys: SigningKeyService) {}

  /** Published in the JWKS at once; current only when it is the first key. */
  @Post()
  @ApiCreatedResponse({ type: SigningKeyResponse })
  async add(@Body() body: AddSigningKeyDto): Promise<SigningKeyResponse> {
    return toSigningKeyResponse(await this.keys.add(body.algorithm ?? 'ES256'));
  }

  /** Every key, soft-deleted ones included, newest first. */
  @Get()
  @ApiOkResponse({ type: SigningKeyListResponse })
  async list(): Promise<SigningKeyListResponse> {
    return { items: (await this.keys.list()).map(toSigningKeyResponse) };
  }

  @Put(':kid/current')
  @NoBody()
  @ApiOkResponse({ type: SigningKeyResponse })
  async promote(@Param() { kid }: KidParam): Promise<SigningKeyResponse> {
    return toSigningKeyResponse(await this.keys.promote(kid));
  }

  /** Soft delete; 409 last_key for the last key, 409 current_key for the current one. */
  @Delete(':kid')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse()
  remove(@Param() { kid }: KidParam): Promise<void> {
    return this.keys.delete(kid);
  }
}
