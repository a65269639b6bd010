import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { EncryptJWT, jwtDecrypt } from 'jose';

export const SESSION_COOKIE_NAME = 'session_token';
const AUDIENCE = 'broker-session';
const PURPOSE = 'agent-identity-broker session cookie v1';

/** A decrypted session cookie. */
export interface SessionClaims {
  readonly principal: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/**
 * The end-user session cookie: an expiring compact JWE (dir + A256GCM) binding the
 * principal. Keys derive from `third_party_oauth2.jwe_keys` with a purpose label
 * (HKDF), so a cookie and a state token can never be swapped; the first key
 * encrypts, every key decrypts (rotation). Keys are derived once, at construction.
 */
@Injectable()
export class SessionCookieService {
  private readonly keys: ReadonlyMap<string, KeyObject>;
  private readonly currentKid: string;
  private readonly ttlSeconds: number;
  readonly secure: boolean;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly clock: Clock,
  ) {
    const keys = new Map<string, KeyObject>();
    for (const { id, key } of config.third_party_oauth2.jwe_keys) {
      keys.set(id, createSecretKey(Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), PURPOSE, 32))));
    }
    this.keys = keys;
    this.currentKid = (config.third_party_oauth2.jwe_keys[0] as { id: string }).id;
    this.ttlSeconds = Math.max(60, Math.floor(config.server.enduser.session.ttl / 1000));
    this.secure = new URL(config.server.enduser.public_url).protocol === 'https:';
  }

  async issue(principal: string): Promise<string> {
    const now = Math.floor(this.clock.nowMs() / 1000);
    return new EncryptJWT({})
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: this.currentKid, typ: 'session+jwt' })
      .setSubject(principal)
      .setAudience(AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + this.ttlSeconds)
      .encrypt(this.keys.get(this.currentKid) as KeyObject);
  }

  /** The cookie's claims, or undefined when it is malformed, tampered with or expired. */
  async verify(token: string): Promise<SessionClaims | undefined> {
    try {
      const { payload } = await jwtDecrypt(
        token,
        (header) => {
          const key = header.kid === undefined ? undefined : this.keys.get(header.kid);
          if (key === undefined) throw new Error('unknown key');
          return key;
        },
        { audience: AUDIENCE, currentDate: this.clock.now(), keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] },
      );
      if (typeof payload.sub !== 'string' || payload.exp === undefined || payload.iat === undefined) return undefined;
      return { principal: payload.sub, issuedAt: payload.iat, expiresAt: payload.exp };
    } catch {
      return undefined;
    }
  }

  /** True when a cookie is past half its lifetime and should be re-issued. */
  isStale(claims: SessionClaims): boolean {
    return this.clock.nowMs() / 1000 > claims.issuedAt + this.ttlSeconds / 2;
  }

  /** The `Set-Cookie` value for a freshly issued cookie. */
  setCookieHeader(token: string): string {
    return `${SESSION_COOKIE_NAME}=${token}; Path=/; Max-Age=${this.ttlSeconds}; HttpOnly; SameSite=Lax${this.secure ? '; Secure' : ''}`;
  }
}
