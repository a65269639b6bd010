import { constants, createPublicKey, verify as cryptoVerify, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { AsymmetricAlgorithm } from '@broker/domain';
import type { JWTHeaderParameters, JWTPayload } from 'jose';

/**
 * JWT signature and claim verification with node:crypto directly (RFC 7515 compact JWS,
 * RFC 7518 algorithms, RFC 7519 claims), for the token endpoint's hot path: jose's
 * `jwtVerify` goes through WebCrypto, whose asynchronous jobs cost about twice the CPU of
 * `crypto.verify` for an ES256 signature on this path (measured in bench/RESULTS.md). It
 * accepts exactly what jose accepted here before, or less:
 * - three base64url segments (a JWE's five are refused), a header and claims that are JSON
 *   objects, an `alg` from the caller's allow-list (asymmetric only), no `crit` (we
 *   implement no extension; jose tolerated `crit: ["b64"]` with `b64: true` only);
 * - the key chosen from the trusted set as jose's local JWK set chooses it (`kty` of the
 *   algorithm, the header's `kid`, the key's `alg`, `use` and `key_ops` when present, the
 *   curve of the algorithm); RSA keys of at least 2048 bits;
 * - the signature per RFC 7518 §3 (ECDSA as the raw r || s of the curve's exact length,
 *   RSASSA-PKCS1-v1_5, RSASSA-PSS with MGF1 and a salt of the hash length, EdDSA);
 * - claims as jose checks them (`iss` equal, one expected `aud`, `exp` required and a
 *   number, `nbf` and `iat` numbers when present, `exp`/`nbf` with the leeway).
 */

/** A key of the trusted set, imported once: its JWK members that select it, and the public key. */
export interface VerificationKey {
  readonly kty: string;
  readonly kid?: string;
  readonly alg?: string;
  readonly use?: string;
  readonly keyOps?: readonly string[];
  readonly crv?: string;
  readonly key: KeyObject;
}

interface AlgorithmParams {
  readonly kty: 'EC' | 'RSA' | 'OKP';
  readonly curves?: readonly string[];
  /** node:crypto's digest name; null for EdDSA. */
  readonly hash: string | null;
  /** ECDSA: the exact length of r || s. */
  readonly signatureLength?: number;
  readonly pss?: boolean;
  readonly saltLength?: number;
}

const PARAMS: Readonly<Record<AsymmetricAlgorithm, AlgorithmParams>> = {
  ES256: { kty: 'EC', curves: ['P-256'], hash: 'sha256', signatureLength: 64 },
  ES384: { kty: 'EC', curves: ['P-384'], hash: 'sha384', signatureLength: 96 },
  ES512: { kty: 'EC', curves: ['P-521'], hash: 'sha512', signatureLength: 132 },
  RS256: { kty: 'RSA', hash: 'sha256' },
  RS384: { kty: 'RSA', hash: 'sha384' },
  RS512: { kty: 'RSA', hash: 'sha512' },
  PS256: { kty: 'RSA', hash: 'sha256', pss: true, saltLength: 32 },
  PS384: { kty: 'RSA', hash: 'sha384', pss: true, saltLength: 48 },
  PS512: { kty: 'RSA', hash: 'sha512', pss: true, saltLength: 64 },
  EdDSA: { kty: 'OKP', curves: ['Ed25519'], hash: null },
};

/** Why a token was refused; `code` names the rule (never the token). */
export class JwsRefused extends Error {
  constructor(readonly code: string) {
    super(code);
    this.name = 'JwsRefused';
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A base64url segment's JSON object; `JwsRefused` when it is not one. */
export function decodeJson(segment: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new JwsRefused(`${what} is not JSON`);
  }
  if (!isObject(value)) throw new JwsRefused(`${what} is not a JSON object`);
  return value;
}

/**
 * The public keys of a JWK set that could ever verify a JWS, imported once: private and
 * symmetric members make a key unusable (never a shared secret from a public document),
 * as do keys node:crypto cannot import. RSA keys under 2048 bits are dropped too.
 */
export function importVerificationKeys(keys: readonly unknown[]): VerificationKey[] {
  const imported: VerificationKey[] = [];
  for (const jwk of keys) {
    if (!isObject(jwk) || typeof jwk.kty !== 'string' || !['EC', 'RSA', 'OKP'].includes(jwk.kty)) continue;
    if (jwk.d !== undefined || jwk.p !== undefined || jwk.k !== undefined) continue;
    if (jwk.ext !== undefined && typeof jwk.ext !== 'boolean') continue;
    // jose's rule: key_ops, when present, is a list of distinct strings (then it must include "verify").
    const ops = jwk.key_ops;
    if (
      ops !== undefined &&
      !(Array.isArray(ops) && ops.every((op, i) => typeof op === 'string' && ops.indexOf(op) === i))
    )
      continue;
    let key: KeyObject;
    try {
      key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    } catch {
      continue;
    }
    if (jwk.kty === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) continue;
    imported.push({
      kty: jwk.kty,
      ...(typeof jwk.kid === 'string' ? { kid: jwk.kid } : {}),
      ...(typeof jwk.alg === 'string' ? { alg: jwk.alg } : {}),
      ...(typeof jwk.use === 'string' ? { use: jwk.use } : {}),
      ...(Array.isArray(ops) ? { keyOps: ops as string[] } : {}),
      ...(typeof jwk.crv === 'string' ? { crv: jwk.crv } : {}),
      key,
    });
  }
  return imported;
}

/** The keys that may verify a JWS with this header (the selection of jose's local JWK set). */
export function candidateKeys(
  keys: readonly VerificationKey[],
  alg: AsymmetricAlgorithm,
  kid: unknown,
): VerificationKey[] {
  const params = PARAMS[alg];
  return keys.filter(
    (k) =>
      k.kty === params.kty &&
      (kid === undefined || (typeof kid === 'string' && k.kid === kid)) &&
      (k.alg === undefined || k.alg === alg) &&
      (k.use === undefined || k.use === 'sig') &&
      (k.keyOps === undefined || k.keyOps.includes('verify')) &&
      (params.curves === undefined || (k.crv !== undefined && params.curves.includes(k.crv))),
  );
}

/** A compact JWS taken apart; nothing is trusted yet. */
export interface DecodedJws {
  readonly header: JWTHeaderParameters;
  readonly alg: AsymmetricAlgorithm;
  readonly payloadSegment: string;
  readonly signingInput: Buffer;
  readonly signature: Buffer;
}

/** Splits and decodes `jwt`; refuses anything but a compact JWS with an allowed algorithm and no `crit`. */
export function decodeJws(jwt: string, algorithms: readonly string[]): DecodedJws {
  const parts = jwt.split('.');
  if (parts.length !== 3) throw new JwsRefused('not a compact JWS');
  const [headerSegment, payloadSegment, signatureSegment] = parts as [string, string, string];
  if (!BASE64URL.test(headerSegment) || !BASE64URL.test(payloadSegment) || !BASE64URL.test(signatureSegment))
    throw new JwsRefused('not base64url');
  const header = decodeJson(headerSegment, 'the header');
  const alg = header.alg;
  if (typeof alg !== 'string' || !algorithms.includes(alg) || !Object.hasOwn(PARAMS, alg))
    throw new JwsRefused('alg not allowed');
  if (header.crit !== undefined) throw new JwsRefused('crit not supported');
  return {
    header: header as JWTHeaderParameters,
    alg: alg as AsymmetricAlgorithm,
    payloadSegment,
    signingInput: Buffer.from(`${headerSegment}.${payloadSegment}`, 'ascii'),
    signature: Buffer.from(signatureSegment, 'base64url'),
  };
}

/** Whether `key` signed `jws` (RFC 7518 §3.3-3.5; RFC 8037 §3.1, Ed25519 as jose accepts). */
export function signatureValid(jws: DecodedJws, key: KeyObject): boolean {
  const params = PARAMS[jws.alg];
  if (params.signatureLength !== undefined && jws.signature.length !== params.signatureLength) return false;
  try {
    if (params.signatureLength !== undefined)
      return cryptoVerify(params.hash, jws.signingInput, { key, dsaEncoding: 'ieee-p1363' }, jws.signature);
    if (params.pss === true)
      return cryptoVerify(
        params.hash,
        jws.signingInput,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: params.saltLength },
        jws.signature,
      );
    return cryptoVerify(params.hash, jws.signingInput, key, jws.signature);
  } catch {
    // A key of another type or curve than the algorithm's: not this key's signature.
    return false;
  }
}

export interface ClaimRules {
  readonly issuer: string;
  /** Accepted audiences; undefined: not checked. */
  readonly audience?: readonly string[];
  readonly toleranceSeconds: number;
  readonly nowMs: number;
}

/** The claims of a verified JWS, checked as RFC 7519 §4.1 and jose do. */
export function checkedClaims(jws: DecodedJws, rules: ClaimRules): JWTPayload {
  const payload = decodeJson(jws.payloadSegment, 'the claims') as JWTPayload;
  if (payload.iss !== rules.issuer) throw new JwsRefused('unexpected iss');
  if (rules.audience !== undefined) {
    const { aud } = payload;
    const accepted =
      typeof aud === 'string'
        ? rules.audience.includes(aud)
        : Array.isArray(aud) && rules.audience.some((expected) => aud.includes(expected));
    if (!accepted) throw new JwsRefused('unexpected aud');
  }
  const now = Math.floor(rules.nowMs / 1000);
  if (payload.iat !== undefined && typeof payload.iat !== 'number') throw new JwsRefused('iat is not a number');
  if (payload.nbf !== undefined) {
    if (typeof payload.nbf !== 'number') throw new JwsRefused('nbf is not a number');
    if (payload.nbf > now + rules.toleranceSeconds) throw new JwsRefused('not yet valid');
  }
  if (payload.exp === undefined) throw new JwsRefused('exp missing');
  if (typeof payload.exp !== 'number') throw new JwsRefused('exp is not a number');
  if (payload.exp <= now - rules.toleranceSeconds) throw new JwsRefused('expired');
  return payload;
}
