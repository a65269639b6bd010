import type { SigningAlgorithm } from '@broker/domain';
import type { SigningKeyRecord } from '@broker/persistence';

/** A signing key as the admin API shows it: metadata only, never key material. */
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

export function toSigningKeyResponse(key: SigningKeyRecord): SigningKeyResponse {
  return { kid: key.kid, algorithm: key.algorithm, is_current: key.isCurrent, created_at: key.createdAt.toISOString(), deleted_at: key.deletedAt?.toISOString() ?? null };
}
