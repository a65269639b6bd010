import { BrokerMetrics } from '@broker/telemetry';
import { FrozenClock } from '@broker/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey, importPrivateKey, signCompactJws } from '../signing-keys/key-material';
import type { JsonWebKeySet, SigningKeyService } from '../signing-keys/signing-key.service';
import type { AccessTokenIssuer } from '../token/access-token-issuer';
import { LocalTokenVerifier } from './local-token-verifier';

const ISSUER = 'https://broker.example.com';

/** The broker's key set as `SigningKeyService.jwks` serves it: a new object whenever it is reloaded. */
class KeySet {
  keys: Readonly<Record<string, string>>[] = [];

  jwks(): Promise<JsonWebKeySet> {
    return Promise.resolve({ keys: [...this.keys] });
  }
}

describe('LocalTokenVerifier', () => {
  const clock = new FrozenClock('2026-11-26T12:00:00Z');
  const now = () => Math.floor(clock.nowMs() / 1000);
  const keySet = new KeySet();
  const verifier = new LocalTokenVerifier(
    keySet as unknown as SigningKeyService,
    { issuer: ISSUER } as AccessTokenIssuer,
    clock,
    new BrokerMetrics(false),
  );
  let sign: (claims: Record<string, unknown>, header?: Record<string, unknown>) => string;
  let otherKey: Readonly<Record<string, string>>;

  beforeAll(async () => {
    const key = await generateSigningKey('ES256');
    const other = await generateSigningKey('ES256');
    keySet.keys = [key.publicJwk];
    otherKey = other.publicJwk;
    const privateKey = importPrivateKey(key.privateKeyDer);
    sign = (claims, header = {}) =>
      signCompactJws(
        { alg: 'ES256', kid: key.kid, typ: 'at+jwt', ...header },
        { iss: ISSUER, sub: 'agent', iat: now(), exp: now() + 3600, jti: 'j', ...claims },
        privateKey,
        'ES256',
      );
  });

  it('accepts an access token signed with a live key, issued by the broker, within its lifetime', async () => {
    expect(await verifier.verify(sign({}))).toMatchObject({ iss: ISSUER, sub: 'agent' });
  });

  it('refuses another type of JWT, another issuer, an expired token (no leeway) and a token not yet valid', async () => {
    expect(await verifier.verify(sign({}, { typ: 'JWT' }))).toBeUndefined();
    expect(await verifier.verify(sign({ iss: 'https://other.example.com' }))).toBeUndefined();
    expect(await verifier.verify(sign({ exp: now() }))).toBeUndefined();
    expect(await verifier.verify(sign({ nbf: now() + 10 }))).toBeUndefined();
    expect(await verifier.verify('not.a.token')).toBeUndefined();
    expect(await verifier.verify(`${sign({}).slice(0, -4)}AAAA`)).toBeUndefined();
  });

  it('stops answering for a remembered token once it expires', async () => {
    const token = sign({ exp: now() + 60 });
    for (let i = 0; i < 3; i += 1) expect(await verifier.verify(token)).toBeDefined();
    clock.advance(60_000);
    expect(await verifier.verify(token)).toBeUndefined();
  });

  it('stops verifying a remembered token at once when its key leaves the key set', async () => {
    const token = sign({});
    for (let i = 0; i < 3; i += 1) expect(await verifier.verify(token)).toBeDefined();
    const live = keySet.keys;
    keySet.keys = [otherKey];
    expect(await verifier.verify(token)).toBeUndefined();
    keySet.keys = live;
    expect(await verifier.verify(token)).toBeDefined();
  });
});
