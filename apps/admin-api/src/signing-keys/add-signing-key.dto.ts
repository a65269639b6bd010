import { SIGNING_ALGORITHMS, type SigningAlgorithm } from '@broker/domain';
import { IsIn } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOmittable } from '../common/is-omittable';

/** Body of `POST /api/oauth2-server/signing-keys`. */
export class AddSigningKeyDto {
  /** ES256 (when omitted), RS256 or EdDSA (`null` is refused). */
  @IsOmittable()
  @IsIn(SIGNING_ALGORITHMS)
  @ApiPropertyOptional({ example: 'ES256' })
  algorithm?: SigningAlgorithm;
}
