import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { DpopNonces } from './dpop-nonces';
import { normalisedHtu } from './dpop-proofs';
import { sha256Thumbprint, thumbprintInput } from './jwk-thumbprint';

describe('DPoP building blocks', () => {
  it('normalises htu as RFC 3986 §6.2.2-6.2.3 say, without query and fragment', () => {
    expect(normalisedHtu('HTTPS://Broker.Example.COM:443/oauth2/%74oken?x=1#f')).toBe(
      'https://broker.example.com/oauth2/token',
    );
    expect(normalisedHtu('http://127.0.0.1:80/a/../oauth2/%2ftoken')).toBe('http://127.0.0.1/oauth2/%2Ftoken');
    expect(normalisedHtu('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/');
    expect(normalisedHtu('ftp://broker.example.com/oauth2/token')).toBeUndefined();
    expect(normalisedHtu('/oauth2/token')).toBeUndefined();
  });

  it('computes the RFC 7638 thumbprint as jose does, from the required members only', async () => {
    for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
      const jwk = await exportJWK((await generateKeyPair(alg, { extractable: true })).publicKey);
      const input = thumbprintInput({ ...jwk, alg, use: 'sig', kid: 'ignored' });
      expect(input).toBeDefined();
      expect(sha256Thumbprint(input as string)).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
    }
    expect(thumbprintInput({ kty: 'oct', k: 'c2VjcmV0' })).toBeUndefined();
    expect(thumbprintInput({ kty: 'EC', crv: 'P-256', x: 'abc' })).toBeUndefined();
  });

  it('accepts a nonce for at least half its lifetime and at most all of it, on any instance sharing a key', () => {
    const old = { id: 'old', key: randomBytes(32) };
    const next = { id: 'next', key: randomBytes(32) };
    const lifetime = 5 * 60_000;
    const start = 1_800_000_000_000;
    const one = new DpopNonces([old], lifetime);
    const nonce = one.issue(start);
    expect(one.accepts(nonce, start)).toBe(true);
    expect(one.issue(start + 1000)).toBe(nonce);
    // Another replica with the same keys, after a rotation that put a new key first.
    const other = new DpopNonces([next, old], lifetime);
    expect(other.accepts(nonce, start + lifetime / 2)).toBe(true);
    expect(other.issue(start)).not.toBe(nonce);
    expect(one.accepts(nonce, start + lifetime + 1)).toBe(false);
    expect(one.accepts('made-up', start)).toBe(false);
    expect(one.accepts(undefined, start)).toBe(false);
    expect(new DpopNonces([next], lifetime).accepts(nonce, start)).toBe(false);
  });
});
