import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import type { SymmetricKey } from '@broker/config';
import type { Clock } from '@broker/domain';
import { EncryptJWT, jwtDecrypt, type JWTPayload } from 'jose';

/**
 * Self-contained encrypted tokens (compact JWE, `dir` + `A256GCM`) for one purpose:
 * session cookies, authorization session tokens, third-party state tokens. Keys derive
 * from `third_party_oauth2.jwe_keys` by HKDF with the purpose as label, so a token of
 * one purpose never opens as another; the first key encrypts, every key decrypts (the
 * `kid` header names it), so keys rotate without invalidating live tokens. Keys are
 * derived once, at construction.
 */
export class JweCodec {
  private readonly keys: ReadonlyMap<string, KeyObject>;
  private readonly currentKid: string;

  constructor(
    keys: readonly SymmetricKey[],
    private readonly purpose: string,
    private readonly clock: Clock,
  ) {
    if (keys.length === 0) throw new Error('at least one JWE key is required');
    this.keys = new Map(
      keys.map(({ id, key }) => [
        id,
        createSecretKey(Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `agent-identity-broker ${purpose}`, 32))),
      ]),
    );
    this.currentKid = (keys[0] as SymmetricKey).id;
  }

  /** Encrypts `claims` with `iat`, `exp` (now + ttl) and the purpose as audience. */
  seal(claims: JWTPayload, ttlSeconds: number): Promise<string> {
    const now = Math.floor(this.clock.nowMs() / 1000);
    return new EncryptJWT(claims)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: this.currentKid, typ: 'JWT' })
      .setAudience(this.purpose)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .encrypt(this.keys.get(this.currentKid) as KeyObject);
  }

  /**
   * The claims, or undefined when the token is malformed, tampered with, of another purpose, or
   * expired (more than `lapsedForSeconds` ago: 0 unless a caller reads a token past its `exp` on purpose).
   */
  async open(token: string, lapsedForSeconds = 0): Promise<JWTPayload | undefined> {
    try {
      const { payload } = await jwtDecrypt(
        token,
        (header) => {
          const key = header.kid === undefined ? undefined : this.keys.get(header.kid);
          if (key === undefined) throw new Error('unknown key');
          return key;
        },
        {
          audience: this.purpose,
          currentDate: this.clock.now(),
          clockTolerance: lapsedForSeconds,
          keyManagementAlgorithms: ['dir'],
          contentEncryptionAlgorithms: ['A256GCM'],
          requiredClaims: ['exp', 'iat'],
        },
      );
      return payload;
    } catch {
      return undefined;
    }
  }
}
