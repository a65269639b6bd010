import { createPrivateKey, generateKeyPair, type KeyObject } from 'node:crypto';
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
