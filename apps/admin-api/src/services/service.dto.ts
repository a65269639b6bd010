import { TOKEN_ENDPOINT_AUTH_METHODS, type TokenEndpointAuthMethod } from '@broker/domain';
import { IsHttpsOrLoopbackUrl, IsHttpUrl, IsPlainText, IsScopeToken, MAX_LIST_ENTRIES } from '@broker/http';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Length, ValidateNested } from 'class-validator';

export class ServiceScopeDto {
  @IsScopeToken()
  scope!: string;

  /** Human-readable, shown on the consent page. */
  @IsOptional()
  @IsString()
  @Length(0, 1000)
  @IsPlainText({ lines: true })
  description?: string;
}

/** Body of `POST /api/services` and `PUT /api/services/{id}`. */
export class ServiceDto {
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  display_name!: string;

  @IsOptional()
  @IsString()
  @Length(0, 4000)
  @IsPlainText({ lines: true })
  description?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  @IsPlainText()
  logo_url?: string | null;

  /** The broker's client id at the third party. */
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  client_id!: string;

  /** Write-only; encrypted at rest. On PUT, omitted keeps the stored secret and null removes it. */
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  @IsPlainText()
  client_secret?: string | null;

  /** Default: client_secret_basic with a secret, none without. */
  @IsOptional()
  @IsIn(TOKEN_ENDPOINT_AUTH_METHODS)
  token_endpoint_auth_method?: TokenEndpointAuthMethod;

  @IsString()
  @IsHttpUrl()
  @IsPlainText()
  issuer_uri!: string;

  /** Discovered from issuer_uri when omitted. */
  @IsOptional()
  @IsHttpUrl()
  @IsPlainText()
  authorization_endpoint?: string | null;

  /** Discovered from issuer_uri when omitted. */
  @IsOptional()
  @IsHttpUrl()
  @IsPlainText()
  token_endpoint?: string | null;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => ServiceScopeDto)
  scopes?: ServiceScopeDto[];

  /** Absolute http(s) URIs; stored without trailing slash; each belongs to one service only. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsString({ each: true })
  @IsPlainText({}, { each: true })
  protected_resources?: string[];
}
