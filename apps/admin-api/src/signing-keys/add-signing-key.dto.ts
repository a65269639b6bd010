import { SIGNING_ALGORITHMS, type SigningAlgorithm } from '@broker/domain';
import { IsIn, IsOptional } from 'class-validator';

/** Body of `POST /api/oauth2-server/signing-keys`. */
export class AddSigningKeyDto {
  /** ES256 (default), RS256 or EdDSA. */
  @IsOptional()
  @IsIn(SIGNING_ALGORITHMS)
  algorithm?: SigningAlgorithm;
}
