import type { ClientCredentialsMetadata, IssuedClientCredentials } from '@broker/oauth-server';
import { ApiProperty } from '@nestjs/swagger';

/** Answer of the first generation (201): the only time this secret is shown. */
export class IssuedClientCredentialsResponse {
  /** The agent's id. */
  @ApiProperty({ example: '3f0c8b9e-5d41-4c1a-9b7e-2a6f1d8c4e55', format: 'uuid' })
  client_id!: string;
  /** Shown once; only its SHA-256 digest is stored. 256 random bits after a recognisable prefix. */
  @ApiProperty({ pattern: '^aib_cs_[A-Za-z0-9_-]{43}$' })
  client_secret!: string;
  /** When the agent's credentials were first generated (unchanged by rotations). */
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  created_at!: string;
}

/** Answer of a rotation (200): the new secret, and when the previous one stopped working. */
export class RotatedClientCredentialsResponse extends IssuedClientCredentialsResponse {
  @ApiProperty({ example: '2026-11-20T10:00:00.000Z', format: 'date-time' })
  previous_invalidated_at!: string;
}

/** Client credentials as the admin API shows them afterwards: metadata only, never the secret. */
export class ClientCredentialsMetadataResponse {
  /** The agent's id. */
  @ApiProperty({ example: '3f0c8b9e-5d41-4c1a-9b7e-2a6f1d8c4e55', format: 'uuid' })
  client_id!: string;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  created_at!: string;
  /** When the secret was last rotated; `null` before the first rotation. */
  @ApiProperty({ example: '2026-11-20T10:00:00.000Z', format: 'date-time' })
  rotated_at!: string | null;
}

export function toIssuedClientCredentialsResponse(
  issued: IssuedClientCredentials,
): IssuedClientCredentialsResponse | RotatedClientCredentialsResponse {
  const response: IssuedClientCredentialsResponse = {
    client_id: issued.clientId,
    client_secret: issued.clientSecret,
    created_at: issued.createdAt.toISOString(),
  };
  return issued.previousInvalidatedAt === null
    ? response
    : { ...response, previous_invalidated_at: issued.previousInvalidatedAt.toISOString() };
}

export function toClientCredentialsMetadataResponse(
  metadata: ClientCredentialsMetadata,
): ClientCredentialsMetadataResponse {
  return {
    client_id: metadata.clientId,
    created_at: metadata.createdAt.toISOString(),
    rotated_at: metadata.rotatedAt?.toISOString() ?? null,
  };
}
