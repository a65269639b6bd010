import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { JweCodec } from '@broker/vault';
import { Inject, Injectable } from '@nestjs/common';

export const SESSION_COOKIE_NAME = 'session_token';

/** A decrypted session cookie. */
export interface SessionClaims {
  readonly principal: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/**
 * The end-user session cookie: an expiring compact JWE binding the principal (keys and
 * rotation: `JweCodec`, purpose "session cookie").
 */
@Injectable()
export class SessionCookieService {
  private readonly codec: JweCodec;
  private readonly ttlSeconds: number;
  readonly secure: boolean;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly clock: Clock,
  ) {
    this.codec = new JweCodec(config.third_party_oauth2.jwe_keys, 'session cookie', clock);
    this.ttlSeconds = Math.max(60, Math.floor(config.server.enduser.session.ttl / 1000));
    this.secure = new URL(config.server.enduser.public_url).protocol === 'https:';
  }

  issue(principal: string): Promise<string> {
    return this.codec.seal({ sub: principal }, this.ttlSeconds);
  }

  /** The cookie's claims, or undefined when it is malformed, tampered with or expired. */
  async verify(token: string): Promise<SessionClaims | undefined> {
    const payload = await this.codec.open(token);
    if (payload === undefined || typeof payload.sub !== 'string') return undefined;
    return { principal: payload.sub, issuedAt: payload.iat as number, expiresAt: payload.exp as number };
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
