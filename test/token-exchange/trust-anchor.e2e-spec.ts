import { ConfigError } from '@broker/config';
import { JwtRejected, TrustAnchor, VerifiedJwtCache } from '@broker/oauth-server';
import { FrozenClock, startJwtIssuer, testConfig, type TestJwtIssuer } from '@broker/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * The trust anchor's key and verified-token caches ("Keys never loaded per
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
    anchor = new TrustAnchor(
      testConfig({
        server: { enduser: { public_url: audience } },
        token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } },
      }),
      clock,
    );
  });
  afterEach(() => issuer.stop());

  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 100));

  it('verifies a reused token once and fetches the keys once', async () => {
    const token = await issuer.sign({ sub: 'user-1' }, { audience, ttlSeconds: 3600 });
    for (let i = 0; i < 5; i += 1) expect((await anchor.verify(token, 'subject_token')).sub).toBe('user-1');
    expect(issuer.fetches()).toBe(1);
  });

  it('keeps what a token was verified for apart: a cached subject token (at+jwt) is no client assertion', async () => {
    const token = await issuer.sign({ sub: 'user-1' }, { audience, ttlSeconds: 3600, typ: 'at+jwt' });
    await anchor.verify(token, 'subject_token');
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
    expect(
      (await anchor.verify(await issuer.sign({ sub: 'gateway' }, { audience, ttlSeconds: 3600 }), 'client_assertion'))
        .sub,
    ).toBe('gateway');
    expect(issuer.fetches()).toBe(2);
  });

  it('refetches on an unknown kid at most once per 30 s', async () => {
    await anchor.verify(await issuer.sign({ sub: 'user-1' }, { audience, ttlSeconds: 3600 }), 'subject_token');
    clock.advance(31_000);
    await issuer.rotate();
    // Unknown kid: one refetch, and the new key verifies.
    expect(
      (await anchor.verify(await issuer.sign({ sub: 'user-2' }, { audience, ttlSeconds: 3600 }), 'subject_token')).sub,
    ).toBe('user-2');
    expect(issuer.fetches()).toBe(2);
    // Another unknown kid within the interval: no fetch, rejected.
    await issuer.rotate();
    const next = await issuer.sign({ sub: 'user-3' }, { audience, ttlSeconds: 3600 });
    await expect(anchor.verify(next, 'subject_token')).rejects.toThrow(JwtRejected);
    await expect(anchor.verify(next, 'subject_token')).rejects.toThrow(JwtRejected);
    expect(issuer.fetches()).toBe(2);
    clock.advance(30_000);
    expect((await anchor.verify(next, 'subject_token')).sub).toBe('user-3');
    expect(issuer.fetches()).toBe(3);
  });

  it('does not serve a cached token past its exp', async () => {
    const token = await issuer.sign({ sub: 'user-1' }, { audience, ttlSeconds: 30 });
    await anchor.verify(token, 'subject_token');
    // Past exp + the 60 s leeway: verified again, and refused.
    clock.advance(91_000);
    await expect(anchor.verify(token, 'subject_token')).rejects.toThrow(JwtRejected);
  });
});

/**
 * A subject token is checked for its audience like the client
 * assertion, and a client assertion is told apart from other JWTs of the same issuer.
 */
describe('trust anchor: what each token is for', () => {
  let issuer: TestJwtIssuer;
  let clock: FrozenClock;
  const broker = 'https://broker.example.com';
  const anchorFor = (tokenExchange: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): TrustAnchor => {
    const { client_assertion: assertion = {}, ...rest } = tokenExchange as {
      client_assertion?: Record<string, unknown>;
    };
    return new TrustAnchor(
      testConfig({
        server: { enduser: { public_url: broker } },
        token_exchange: {
          client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri, ...assertion },
          ...rest,
        },
        ...extra,
      }),
      clock,
    );
  };

  beforeEach(async () => {
    issuer = await startJwtIssuer('ES256');
    clock = new FrozenClock(new Date());
  });
  afterEach(() => issuer.stop());

  it('refuses a subject token for another application or API, or for no audience (default: the client assertion audiences)', async () => {
    const anchor = anchorFor();
    expect((await anchor.verify(await issuer.sign({ sub: 'alice' }, { audience: broker }), 'subject_token')).sub).toBe(
      'alice',
    );
    await expect(
      anchor.verify(
        await issuer.sign({ sub: 'alice' }, { audience: 'https://other-api.example.com' }),
        'subject_token',
      ),
    ).rejects.toThrow(JwtRejected);
    await expect(
      anchor.verify(await issuer.sign({ sub: 'alice' }, { audience: 'another-app-client-id' }), 'subject_token'),
    ).rejects.toThrow(JwtRejected);
    await expect(anchor.verify(await issuer.sign({ sub: 'alice' }), 'subject_token')).rejects.toThrow(JwtRejected);
  });

  it('defaults the subject audience to a configured client assertion audience list', async () => {
    const anchor = anchorFor({ client_assertion: { audience: ['https://a.example.com', 'https://b.example.com'] } });
    expect(
      (await anchor.verify(await issuer.sign({ sub: 'alice' }, { audience: 'https://b.example.com' }), 'subject_token'))
        .sub,
    ).toBe('alice');
    await expect(
      anchor.verify(await issuer.sign({ sub: 'alice' }, { audience: broker }), 'subject_token'),
    ).rejects.toThrow(JwtRejected);
  });

  it('checks token_exchange.subject_token.audience when configured (one value or a list), and only for subject tokens', async () => {
    const one = anchorFor({ subject_token: { audience: 'gateway' } });
    expect((await one.verify(await issuer.sign({ sub: 'alice' }, { audience: 'gateway' }), 'subject_token')).sub).toBe(
      'alice',
    );
    await expect(
      one.verify(await issuer.sign({ sub: 'alice' }, { audience: broker }), 'subject_token'),
    ).rejects.toThrow(JwtRejected);
    // The client assertion keeps its own audience.
    expect((await one.verify(await issuer.sign({ sub: 'gw' }, { audience: broker }), 'client_assertion')).sub).toBe(
      'gw',
    );
    await expect(
      one.verify(await issuer.sign({ sub: 'gw' }, { audience: 'gateway' }), 'client_assertion'),
    ).rejects.toThrow(JwtRejected);
    const list = anchorFor({ subject_token: { audience: ['gateway', 'https://mcp.example.com'] } });
    expect(
      (
        await list.verify(
          await issuer.sign({ sub: 'alice' }, { audience: ['https://mcp.example.com', 'x'] }),
          'subject_token',
        )
      ).sub,
    ).toBe('alice');
  });

  it('refuses a client assertion whose typ marks another kind of token (RFC 8725 §3.11), and accepts none, JWT and client-authentication+jwt', async () => {
    const anchor = anchorFor();
    for (const typ of [
      'at+jwt',
      'application/at+jwt',
      'AT+JWT',
      'logout+jwt',
      'secevent+jwt',
      'dpop+jwt',
      'id_token+jwt',
    ]) {
      await expect(
        anchor.verify(await issuer.sign({ sub: 'gw' }, { audience: broker, typ }), 'client_assertion'),
        typ,
      ).rejects.toThrow(JwtRejected);
    }
    for (const typ of [undefined, 'JWT', 'jwt', 'application/jwt', 'client-authentication+jwt']) {
      expect(
        (await anchor.verify(await issuer.sign({ sub: 'gw' }, { audience: broker, typ }), 'client_assertion')).sub,
        String(typ),
      ).toBe('gw');
    }
  });

  it('refuses an ID token where a client assertion is expected (nonce, at_hash or c_hash), whatever its typ', async () => {
    const anchor = anchorFor();
    for (const claims of [
      { nonce: 'n-0S6_WzA2Mj' },
      { at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' },
      { c_hash: 'LDktKdoQak3Pk0cnXxCltA' },
    ]) {
      await expect(
        anchor.verify(
          await issuer.sign({ sub: 'gw', ...claims }, { audience: broker, typ: 'JWT' }),
          'client_assertion',
        ),
        Object.keys(claims)[0],
      ).rejects.toThrow(JwtRejected);
    }
  });

  it('accepts an access token (at+jwt, JWT or untyped) as the subject token, and refuses other explicit types', async () => {
    const anchor = anchorFor();
    for (const typ of [undefined, 'at+jwt', 'application/at+jwt', 'JWT']) {
      expect(
        (await anchor.verify(await issuer.sign({ sub: 'alice' }, { audience: broker, typ }), 'subject_token')).sub,
        String(typ),
      ).toBe('alice');
    }
    for (const typ of ['client-authentication+jwt', 'logout+jwt']) {
      await expect(
        anchor.verify(await issuer.sign({ sub: 'alice' }, { audience: broker, typ }), 'subject_token'),
        typ,
      ).rejects.toThrow(JwtRejected);
    }
  });

  it('requires exp on a client assertion and on a subject token', async () => {
    const anchor = anchorFor();
    await expect(
      anchor.verify(await issuer.sign({ sub: 'gw' }, { audience: broker, ttlSeconds: null }), 'client_assertion'),
    ).rejects.toThrow(JwtRejected);
    await expect(
      anchor.verify(await issuer.sign({ sub: 'alice' }, { audience: broker, ttlSeconds: null }), 'subject_token'),
    ).rejects.toThrow(JwtRejected);
  });

  it('refuses a client assertion living longer than max_lifetime (60 s leeway); no bound by default', async () => {
    const bounded = anchorFor({ client_assertion: { max_lifetime: '5m' } });
    expect(
      (
        await bounded.verify(
          await issuer.sign({ sub: 'gw' }, { audience: broker, ttlSeconds: 300 }),
          'client_assertion',
        )
      ).sub,
    ).toBe('gw');
    expect(
      (
        await bounded.verify(
          await issuer.sign({ sub: 'gw' }, { audience: broker, ttlSeconds: 355 }),
          'client_assertion',
        )
      ).sub,
    ).toBe('gw');
    await expect(
      bounded.verify(await issuer.sign({ sub: 'gw' }, { audience: broker, ttlSeconds: 365 }), 'client_assertion'),
    ).rejects.toThrow(JwtRejected);
    await expect(
      bounded.verify(await issuer.sign({ sub: 'gw' }, { audience: broker, ttlSeconds: 86_400 }), 'client_assertion'),
    ).rejects.toThrow(JwtRejected);
    // Subject tokens are the user's, with the lifetime their issuer chose.
    expect(
      (
        await bounded.verify(
          await issuer.sign({ sub: 'alice' }, { audience: broker, ttlSeconds: 86_400 }),
          'subject_token',
        )
      ).sub,
    ).toBe('alice');
    expect(
      (
        await anchorFor().verify(
          await issuer.sign({ sub: 'gw' }, { audience: broker, ttlSeconds: 86_400 }),
          'client_assertion',
        )
      ).sub,
    ).toBe('gw');
  });

  it("refuses at start-up a trust anchor whose issuer is the broker's own, naming the key", () => {
    const attempt = (extra: Record<string, unknown>, issuerUri: string) => () =>
      new TrustAnchor(
        testConfig({
          server: { enduser: { public_url: broker } },
          token_exchange: { client_assertion: { issuer_uri: issuerUri, jwks_uri: `${broker}/oauth2/jwks.json` } },
          ...extra,
        }),
        clock,
      );
    expect(attempt({}, broker)).toThrow(ConfigError);
    expect(attempt({}, `${broker}/`)).toThrow(
      /^config error: token_exchange\.client_assertion\.issuer_uri is the broker's own issuer \(https:\/\/broker\.example\.com\)/,
    );
    const local = { oauth2_authorization_server: { local: { issuer_uri: 'https://issuer.example.com' } } };
    expect(attempt(local, 'https://issuer.example.com')).toThrow(
      /token_exchange\.client_assertion\.issuer_uri is the broker's own issuer/,
    );
    expect(attempt(local, broker)).not.toThrow();
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
