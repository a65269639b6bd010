import { JwtRejected, TrustAnchor, VerifiedJwtCache } from '@broker/oauth-server';
import { FrozenClock, startJwtIssuer, testConfig, type TestJwtIssuer } from '@broker/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * The trust anchor's key and verified-token caches (issue 7, "Keys never loaded per
 * request"): against a real JWKS on loopback, with the clock moved by hand.
 */
describe('trust anchor: cached keys and verified tokens', () => {
  let issuer: TestJwtIssuer;
  let clock: FrozenClock;
  let anchor: TrustAnchor;
  const audience = 'https://broker.example.com';

  beforeEach(async () => {
    issuer = await startJwtIssuer('ES256');
    clock = new FrozenClock(new Date());
    anchor = new TrustAnchor(testConfig({ server: { enduser: { public_url: audience } }, token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } } }), clock);
  });
  afterEach(() => issuer.stop());

  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 100));

  it('verifies a reused token once and fetches the keys once', async () => {
    const token = await issuer.sign({ sub: 'user-1' }, { ttlSeconds: 3600 });
    for (let i = 0; i < 5; i += 1) expect((await anchor.verify(token, 'subject_token')).sub).toBe('user-1');
    expect(issuer.fetches()).toBe(1);
  });

  it('keeps what a token was verified for apart: a cached subject token is no client assertion', async () => {
    const token = await issuer.sign({ sub: 'user-1' }, { ttlSeconds: 3600 });
    await anchor.verify(token, 'subject_token');
    await expect(anchor.verify(token, 'client_assertion')).rejects.toBeInstanceOf(JwtRejected);
  });

  it('forgets verified tokens when the key set changes: a token of a removed key stops verifying', async () => {
    const token = await issuer.sign({ sub: 'gateway' }, { audience, ttlSeconds: 3600 });
    await anchor.verify(token, 'client_assertion');
    await issuer.rotate();
    // Within the key set's max age, the cached verification stands.
    expect((await anchor.verify(token, 'client_assertion')).sub).toBe('gateway');
    // Past it, a cache hit refetches the keys in the background; the change flushes the cache.
    clock.advance(10 * 60_000 + 1);
    await anchor.verify(token, 'client_assertion');
    await settle();
    expect(issuer.fetches()).toBe(2);
    await expect(anchor.verify(token, 'client_assertion')).rejects.toThrow(JwtRejected);
    // Tokens of the new key verify without another fetch.
    expect((await anchor.verify(await issuer.sign({ sub: 'gateway' }, { audience, ttlSeconds: 3600 }), 'client_assertion')).sub).toBe('gateway');
    expect(issuer.fetches()).toBe(2);
  });

  it('refetches on an unknown kid at most once per 30 s', async () => {
    await anchor.verify(await issuer.sign({ sub: 'user-1' }, { ttlSeconds: 3600 }), 'subject_token');
    clock.advance(31_000);
    await issuer.rotate();
    // Unknown kid: one refetch, and the new key verifies.
    expect((await anchor.verify(await issuer.sign({ sub: 'user-2' }, { ttlSeconds: 3600 }), 'subject_token')).sub).toBe('user-2');
    expect(issuer.fetches()).toBe(2);
    // Another unknown kid within the interval: no fetch, rejected.
    await issuer.rotate();
    const next = await issuer.sign({ sub: 'user-3' }, { ttlSeconds: 3600 });
    await expect(anchor.verify(next, 'subject_token')).rejects.toThrow(JwtRejected);
    await expect(anchor.verify(next, 'subject_token')).rejects.toThrow(JwtRejected);
    expect(issuer.fetches()).toBe(2);
    clock.advance(30_000);
    expect((await anchor.verify(next, 'subject_token')).sub).toBe('user-3');
    expect(issuer.fetches()).toBe(3);
  });

  it('does not serve a cached token past its exp', async () => {
    const token = await issuer.sign({ sub: 'user-1' }, { ttlSeconds: 30 });
    await anchor.verify(token, 'subject_token');
    // Past exp + the 60 s leeway: verified again, and refused.
    clock.advance(91_000);
    await expect(anchor.verify(token, 'subject_token')).rejects.toThrow(JwtRejected);
  });
});

describe('VerifiedJwtCache', () => {
  const payload = (exp: number | undefined) => ({ sub: 's', exp });
  /** Admission is on second sight: the first verification is only remembered as seen. */
  const admit = (cache: VerifiedJwtCache, key: string, exp: number | undefined, now: number) => {
    cache.set(key, payload(exp), now);
    cache.set(key, payload(exp), now);
  };

  it('stores a token only the second time it is verified', () => {
    const cache = new VerifiedJwtCache(10);
    cache.set('a', payload(100), 0);
    expect(cache.get('a', 0)).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.set('a', payload(100), 0);
    expect(cache.get('a', 0)?.sub).toBe('s');
  });

  it('expires an entry at the token exp (no leeway), and never stores a token without exp', () => {
    const cache = new VerifiedJwtCache(10);
    admit(cache, 'a', 100, 50_000);
    expect(cache.get('a', 99_999)?.sub).toBe('s');
    expect(cache.get('a', 100_000)).toBeUndefined();
    admit(cache, 'b', undefined, 0);
    expect(cache.get('b', 0)).toBeUndefined();
    admit(cache, 'c', 10, 10_000);
    expect(cache.size).toBe(0);
  });

  it('is bounded: the oldest entry goes first', () => {
    const cache = new VerifiedJwtCache(2);
    admit(cache, 'a', 100, 0);
    admit(cache, 'b', 100, 0);
    admit(cache, 'c', 100, 0);
    expect(cache.size).toBe(2);
    expect(cache.get('a', 0)).toBeUndefined();
    expect(cache.get('c', 0)?.sub).toBe('s');
  });

  it('keys by purpose and the hash of the exact bytes, never the token itself', () => {
    const key = VerifiedJwtCache.key('subject_token', 'header.payload.signature');
    expect(key).not.toContain('payload');
    expect(key).not.toBe(VerifiedJwtCache.key('client_assertion', 'header.payload.signature'));
    expect(key).not.toBe(VerifiedJwtCache.key('subject_token', 'header.payload.signaturf'));
  });
});
