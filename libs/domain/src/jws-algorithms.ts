/**
 * Asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037 EdDSA) the broker verifies foreign
 * tokens with; HMAC and `none` are never among them. Here so that the configuration schema
 * (impersonation `allowed_algorithms`) and the verifiers use one list.
 */
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

/** One of {@link ASYMMETRIC_ALGORITHMS}. */
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];
