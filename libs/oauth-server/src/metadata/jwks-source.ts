import type { JsonWebKeySet } from '../signing-keys/signing-key.service';

/** Where `GET /oauth2/jwks.json` takes its keys from (local keys, upstream keys, or both). */
export interface JwksSource {
  keySet(): Promise<JsonWebKeySet>;
}

export const JWKS_SOURCE = Symbol('JWKS_SOURCE');
