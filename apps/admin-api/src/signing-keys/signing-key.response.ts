import type { SigningAlgorithm } from '@broker/domain';
import type { SigningKeyRecord } from '@broker/persistence';
import { ApiProperty } from '@nestjs/swagger';

/** A signing key as the admin API shows it: metadata only, never key material. */
export class SigningKeyResponse {
  /** The key id in the JWKS and in the tokens' `kid` header. */
  @ApiProperty({ example: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs', pattern: '^[A-Za-z0-9._-]{1,128}$' })
  kid!: string;
  @ApiProperty({ example: 'ES256' })
  algorithm!: SigningAlgorithm;
  /** The key tokens are signed with; at most one key is current. */
  @ApiProperty({ example: true })
  is_current!: boolean;
  @ApiProperty({ example: '2026-09-01T09:30:00.000Z', format: 'date-time' })
  created_at!: string;
  /** When the key was soft-deleted (gone from the JWKS); `null` while live. */
  @ApiProperty({ example: null, format: 'date-time' })
  deleted_at!: string | null;
}

export class SigningKeyListResponse {
  @ApiProperty()
  items!: SigningKeyResponse[];
}

export function toSigningKeyResponse(key: SigningKeyRecord): SigningKeyResponse {
  return {
    kid: key.kid,
    algorithm: key.algorithm,
    is_current: key.isCurrent,
    created_at: key.createdAt.toISOString(),
    deleted_at: key.deletedAt?.toISOString() ?? null,
  };
}
