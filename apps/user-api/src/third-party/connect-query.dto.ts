import { IsOptional, IsString } from 'class-validator';

// A `.dto.ts` file so that the Swagger CLI plugin (nest-cli.json `dtoFileNameSuffix`) reads it:
// the OpenAPI document keeps the optional, described `redirect_uri` query parameter.
/** Query of `GET /api/third-party/{serviceId}/oauth2/authorize`. */
export class ConnectQuery {
  /** Where to send the user after connecting; its host must be the broker's public host. */
  @IsOptional()
  @IsString()
  redirect_uri?: string;
}
