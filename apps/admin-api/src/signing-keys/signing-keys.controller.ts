import { SigningKeyService } from '@broker/oauth-server';
import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { KidParam } from '../common/id.param';
import { AddSigningKeyDto } from './add-signing-key.dto';
import { SigningKeyListResponse, SigningKeyResponse, toSigningKeyResponse } from './signing-key.response';

@ApiTags('signing-keys')
@ApiSecurity('PrincipalHeader')
@Controller('api/oauth2-server/signing-keys')
export class SigningKeysController {
  constructor(private readonly keys: SigningKeyService) {}

  /** Add a signing key. It is published in the JWKS at once, and current only when it is the first key. */
  @Post()
  @ApiCreatedResponse({ type: SigningKeyResponse })
  async add(@Principal() admin: Principal, @Body() body: AddSigningKeyDto): Promise<SigningKeyResponse> {
    return toSigningKeyResponse(await this.keys.add(body.algorithm ?? 'ES256', admin.id));
  }

  /** List every signing key as `{items}`, soft-deleted ones included, newest first. */
  @Get()
  @ApiOkResponse({ type: SigningKeyListResponse })
  async list(): Promise<SigningKeyListResponse> {
    return { items: (await this.keys.list()).map(toSigningKeyResponse) };
  }

  /** Make a live key the current one: tokens are signed with it from now on. */
  @Put(':kid/current')
  @NoBody()
  @ApiOkResponse({ type: SigningKeyResponse })
  @ApiErrors('signing key not found')
  async promote(@Principal() admin: Principal, @Param() { kid }: KidParam): Promise<SigningKeyResponse> {
    return toSigningKeyResponse(await this.keys.promote(kid, admin.id));
  }

  /**
   * Soft-delete a signing key: it stays listed with `deleted_at` and leaves the JWKS. 409
   * `last_key` for the last live key, 409 `current_key` for the current one.
   */
  @Delete(':kid')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiErrors('signing key not found', 'last_key', 'current_key')
  remove(@Principal() admin: Principal, @Param() { kid }: KidParam): Promise<void> {
    return this.keys.delete(kid, admin.id);
  }
}
