import type { ClientCredentialsMetadata, IssuedClientCredentials } from '@broker/oauth-server';

/** Answer of a generation or rotation: the only time the secret is shown. */
export class IssuedClientCredentialsResponse {
  client_id!: string;
  /** Shown once; only its SHA-256 digest is stored. */
  client_secret!: string;
  created_at!: string;
  /** Present on rotation: when the previous secret stopped working. */
  previous_invalidated_at?: string;
}

/** Client credentials as the admin API shows them afterwards: metadata only, never the secret. */
export class ClientCredentialsMetadataResponse {
  client_id!: string;
  created_at!: string;
  rotated_at!: string | null;
}

export function toIssuedClientCredentialsResponse(issued: IssuedClientCredentials): IssuedClientCredentialsResponse {
  const response: IssuedClientCredentialsResponse = { client_id: issued.clientId, client_secret: issued.clientSecret, created_at: issued.createdAt.toISOString() };
  if (issued.previousInvalidatedAt) response.previous_invalidated_at = issued.previousInvalidatedAt.toISOString();
  return response;
}

export function toClientCredentialsMetadataResponse(metadata: ClientCredentialsMetadata): ClientCredentialsMetadataResponse {
  return { client_id: metadata.clientId, created_at: metadata.createdAt.toISOString(), rotated_at: metadata.rotatedAt?.toISOString() ?? null };
}
