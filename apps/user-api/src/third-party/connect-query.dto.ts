import { ApiProperty } from '@nestjs/swagger';
import { IsString } from 'class-validator';

// A `.dto.ts` file so that the Swagger CLI plugin (nest-cli.json `dtoFileNameSuffix`) reads it.
/** Query of `GET /api/third-party/{serviceId}/oauth2/authorize`. */
export class ConnectQuery {
  /**
   * Where to send the user after connecting: an absolute http(s) URL on the broker's public
   * host (else 400 `invalid_redirect_uri`). Required (missing: 400 `bad request`).
   */
  @ApiProperty({ format: 'uri' })
  @IsString()
  redirect_uri!: string;
}
