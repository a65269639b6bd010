import { generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { ASYMMETRIC_ALGORITHMS, type AsymmetricAlgorithm } from '@broker/domain';
import { createLocalJWKSet, importPKCS8, jwtVerify, SignJWT, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { candidateKeys, checkedClaims, decodeJws, importVerificationKeys, signatureValid } from './compact-jws';

/**
 * The node:crypto verification against jose's `jwtVerify` (which it replaces on the hot
 * path): for every algorithm and for each hostile variation, both must decide alike, except
 * where ours is documented as stricter (`crit`, private members in the key set).
 */
const ISSUER = 'https://issuer.example.com';
const AUDIENCE = 'https://broker.example.com';
const NOW_S = 1_800_000_000;
const TOLERANCE = 60;

interface Keyed {
  readonly alg: AsymmetricAlgorithm;
  readonly privateKey: KeyObject;
  readonly jwk: JWK;
}

function keyPair(alg: AsymmetricAlgorithm, kid: string, rsaBits = 2048): Keyed {
  const pair = alg.startsWith('ES')
    ? generateKeyPairSync('ec', { namedCurve: { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }[alg as 'ES256'] })
    : alg === 'EdDSA'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('rsa', { modulusLength: rsaBits });
  return {
    alg,
    privateKey: pair.privateKey,
    jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as JWK), kid, alg, use: 'sig' },
  };
}

async function signed(
  keyed: Keyed,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const key = await importPKCS8(keyed.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, keyed.alg);
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: NOW_S, exp: NOW_S + 300, ...claims })
    .setProtectedHeader({ alg: keyed.alg, kid: keyed.jwk.kid, ...header })
    .sign(key);
}

/** A compact JWS with exactly these header and claims, signed with node:crypto (for shapes jose refuses to sign). */
function raw(keyed: Keyed, header: Record<string, unknown>, claims: unknown): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = cryptoSign(
    keyed.alg === 'EdDSA' ? null : 'sha256',
    Buffer.from(input),
    keyed.alg.startsWith('ES') ? { key: keyed.privateKey, dsaEncoding: 'ieee-p1363' } : keyed.privateKey,
  );
  return `${input}.${signature.toString('base64url')}`;
}

function ours(
  jwt: string,
  keys: readonly JWK[],
  algorithms: readonly string[] = ASYMMETRIC_ALGORITHMS,
  audience: readonly string[] | undefined = [AUDIENCE],
): string {
  try {
    const jws = decodeJws(jwt, algorithms);
    const candidates = candidateKeys(importVerificationKeys(keys), jws.alg, jws.header.kid);
    if (!candidates.some((k) => signatureValid(jws, k.key))) return 'refused';
    checkedClaims(jws, { issuer: ISSUER, audience, toleranceSeconds: TOLERANCE, nowMs: NOW_S * 1000 });
    return 'accepted';
  } catch {
    return 'refused';
  }
}

async function jose(
  jwt: string,
  keys: readonly JWK[],
  algorithms: readonly string[] = ASYMMETRIC_ALGORITHMS,
  audience: readonly string[] | undefined = [AUDIENCE],
): Promise<string> {
  try {
    await jwtVerify(jwt, createLocalJWKSet({ keys: [...keys] }), {
      issuer: ISSUER,
      audience: audience === undefined ? undefined : [...audience],
      algorithms: [...algorithms],
      clockTolerance: TOLERANCE,
      currentDate: new Date(NOW_S * 1000),
      requiredClaims: ['exp'],
    });
    return 'accepted';
  } catch {
    return 'refused';
  }
}

describe('compact JWS verification with node:crypto, against jose', () => {
  const keys = new Map<AsymmetricAlgorithm, Keyed>();
  beforeAll(() => {
    for (const alg of ASYMMETRIC_ALGORITHMS) keys.set(alg, keyPair(alg, `k-${alg}`));
  });
  const key = (alg: AsymmetricAlgorithm): Keyed => keys.get(alg) as Keyed;
  const everyJwk = (): JWK[] => [...keys.values()].map((k) => k.jwk);

  it.each(ASYMMETRIC_ALGORITHMS)('accepts a valid %s token as jose does, with the claims jose returns', async (alg) => {
    const jwt = await signed(key(alg), { sub: 'alice' });
    expect(ours(jwt, everyJwk())).toBe('accepted');
    expect(await jose(jwt, everyJwk())).toBe('accepted');
    const jws = decodeJws(jwt, ASYMMETRIC_ALGORITHMS);
    expect(
      checkedClaims(jws, { issuer: ISSUER, audience: [AUDIENCE], toleranceSeconds: TOLERANCE, nowMs: NOW_S * 1000 }),
    ).toEqual(
      (await jwtVerify(jwt, createLocalJWKSet({ keys: everyJwk() }), { currentDate: new Date(NOW_S * 1000) })).payload,
    );
  });

  type Variation = { jwt: string; jwks?: JWK[]; algorithms?: readonly string[]; audience?: readonly string[] };
  const variations: [string, () => Variation | Promise<Variation>][] = [
    [
      'a tampered payload',
      async () => {
        const [h, , s] = (await signed(key('ES256'))).split('.');
        return {
          jwt: `${h}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300, sub: 'mallory' })).toString('base64url')}.${s}`,
        };
      },
    ],
    ['another key with the same kid', async () => ({ jwt: await signed(keyPair('ES256', 'k-ES256')) })],
    ['an unknown kid', async () => ({ jwt: await signed(key('ES256'), {}, { kid: 'nope' }) })],
    [
      'a kid that is a number',
      () => ({ jwt: raw(key('ES256'), { alg: 'ES256', kid: 7 }, { iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300 }) }),
    ],
    [
      'no kid, one key of the type',
      () => ({
        jwt: raw(key('ES256'), { alg: 'ES256' }, { iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300 }),
        jwks: [key('ES256').jwk],
      }),
    ],
    [
      'alg none',
      () => ({
        jwt: `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300 })).toString('base64url')}.`,
      }),
    ],
    [
      'HS256 keyed with the public key',
      async () => {
        const { createHmac } = await import('node:crypto');
        const input = `${Buffer.from(JSON.stringify({ alg: 'HS256', kid: 'k-ES256' })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300 })).toString('base64url')}`;
        return {
          jwt: `${input}.${createHmac('sha256', JSON.stringify(key('ES256').jwk))
            .update(input)
            .digest('base64url')}`,
        };
      },
    ],
    ['an algorithm outside the allow-list', async () => ({ jwt: await signed(key('RS256')), algorithms: ['ES256'] })],
    [
      'RS256 header over an EC key',
      () => ({
        jwt: raw(key('ES256'), { alg: 'RS256', kid: 'k-ES256' }, { iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300 }),
      }),
    ],
    [
      'PS256 header over an RS256 signature',
      () => ({
        jwt: raw(key('RS256'), { alg: 'PS256', kid: 'k-RS256' }, { iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300 }),
        jwks: [{ ...key('RS256').jwk, alg: undefined }],
      }),
    ],
    [
      'an ES256 signature in DER',
      () => {
        const input = `${Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'k-ES256' })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300 })).toString('base64url')}`;
        return {
          jwt: `${input}.${cryptoSign('sha256', Buffer.from(input), key('ES256').privateKey).toString('base64url')}`,
        };
      },
    ],
    [
      'an RSA key of 1024 bits',
      () => {
        // jose will not even sign with it: node:crypto does.
        const weak = keyPair('RS256', 'weak', 1024);
        return {
          jwt: raw(weak, { alg: 'RS256', kid: 'weak' }, { iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300 }),
          jwks: [weak.jwk],
        };
      },
    ],
    [
      'a key for encryption only',
      async () => ({ jwt: await signed(key('ES256')), jwks: [{ ...key('ES256').jwk, use: 'enc' }] }),
    ],
    [
      'key_ops without verify',
      async () => ({ jwt: await signed(key('ES256')), jwks: [{ ...key('ES256').jwk, key_ops: ['sign'] }] }),
    ],
    [
      'a key of another alg',
      async () => ({ jwt: await signed(key('ES256')), jwks: [{ ...key('ES256').jwk, alg: 'ES384' }] }),
    ],
    ['expired beyond the leeway', async () => ({ jwt: await signed(key('ES256'), { exp: NOW_S - 61 }) })],
    ['expired within the leeway', async () => ({ jwt: await signed(key('ES256'), { exp: NOW_S - 59 }) })],
    ['expired exactly at the leeway', async () => ({ jwt: await signed(key('ES256'), { exp: NOW_S - 60 }) })],
    ['no exp', () => ({ jwt: raw(key('ES256'), { alg: 'ES256', kid: 'k-ES256' }, { iss: ISSUER, aud: AUDIENCE }) })],
    [
      'exp as a string',
      () => ({
        jwt: raw(
          key('ES256'),
          { alg: 'ES256', kid: 'k-ES256' },
          { iss: ISSUER, aud: AUDIENCE, exp: String(NOW_S + 300) },
        ),
      }),
    ],
    ['nbf ahead beyond the leeway', async () => ({ jwt: await signed(key('ES256'), { nbf: NOW_S + 61 }) })],
    ['nbf ahead within the leeway', async () => ({ jwt: await signed(key('ES256'), { nbf: NOW_S + 60 }) })],
    [
      'iat as a string',
      () => ({
        jwt: raw(
          key('ES256'),
          { alg: 'ES256', kid: 'k-ES256' },
          { iss: ISSUER, aud: AUDIENCE, exp: NOW_S + 300, iat: 'now' },
        ),
      }),
    ],
    ['another issuer', async () => ({ jwt: await signed(key('ES256'), { iss: 'https://evil.example.com' }) })],
    ['another audience', async () => ({ jwt: await signed(key('ES256'), { aud: 'https://other.example.com' }) })],
    [
      'an audience list with ours',
      async () => ({ jwt: await signed(key('ES256'), { aud: ['https://other.example.com', AUDIENCE] }) }),
    ],
    [
      'no aud, audience not checked',
      async () => ({ jwt: await signed(key('ES256'), { aud: undefined }), audience: undefined }),
    ],
    [
      'no aud, audience checked',
      () => ({ jwt: raw(key('ES256'), { alg: 'ES256', kid: 'k-ES256' }, { iss: ISSUER, exp: NOW_S + 300 }) }),
    ],
    ['claims that are an array', () => ({ jwt: raw(key('ES256'), { alg: 'ES256', kid: 'k-ES256' }, [ISSUER]) })],
    [
      'a JWE-shaped token',
      async () => ({ jwt: `${(await signed(key('ES256'))).split('.').slice(0, 2).join('.')}.a.b.c` }),
    ],
    ['a segment with padding', async () => ({ jwt: `${await signed(key('ES256'))}=` })],
    [
      'a header that is not JSON',
      async () => {
        const [, p, s] = (await signed(key('ES256'))).split('.');
        return { jwt: `${Buffer.from('{alg:').toString('base64url')}.${p}.${s}` };
      },
    ],
  ];

  it.each(variations)('decides %s as jose does', async (_name, make) => {
    const { jwt, jwks = everyJwk(), algorithms, audience } = await make();
    const args = [
      jwt,
      jwks,
      algorithms ?? ASYMMETRIC_ALGORITHMS,
      audience === undefined && _name.includes('not checked') ? undefined : (audience ?? [AUDIENCE]),
    ] as const;
    expect(ours(...args)).toBe(await jose(...args));
  });

  it('refuses a crit header (jose accepted crit b64 with b64 true) and ignores a key set member with private parts', async () => {
    const critical = await signed(key('ES256'), {}, { crit: ['b64'], b64: true });
    expect(await jose(critical, everyJwk())).toBe('accepted');
    expect(ours(critical, everyJwk())).toBe('refused');
    const jwk = key('EdDSA').privateKey.export({ format: 'jwk' });
    const withPrivate = { ...jwk, kid: 'k-EdDSA', alg: 'EdDSA' } as JWK;
    expect(ours(await signed(key('EdDSA')), [withPrivate])).toBe('refused');
    expect(ours(await signed(key('EdDSA')), [withPrivate, key('EdDSA').jwk])).toBe('accepted');
  });
});
