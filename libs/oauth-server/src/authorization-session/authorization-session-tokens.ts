import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, Random, isCanonicalUuid } from '@broker/domain';
import { JweCodec } from '@broker/vault';
import { Inject, Injectable } from '@nestjs/common';

/** The CIMD snapshot an authorization session may carry (client ID metadata document agents). */
export interface CimdSnapshot {
  readonly client_id_url: string;
  readonly redirect_uri: string;
  readonly verified_domain: string;
  readonly requested_scopes: readonly string[];
  readonly logo_uri: string | null;
}

/** What an authorization session token carries (docs/consent-and-connections.md). */
export interface AuthorizationSession {
  /**
   * The token's `jti`: the session's identity, under which its one answer is recorded
   * (docs/security.md: a consent link is answered once).
   */
  readonly id: string;
  /** When the token stops being accepted (its `exp`). */
  readonly expiresAt: Date;
  readonly agentId: string;
  readonly principal: string;
  /** The original `/oauth2/authorize` URL, with state, redirect_uri, PKCE and client_id. */
  readonly originalUrl: string;
  readonly cimd: CimdSnapshot | null;
}

/** What `/oauth2/authorize` seals into a new session; the token adds its id and expiry. */
export type NewAuthorizationSession = Omit<AuthorizationSession, 'id' | 'expiresAt'>;

/** Authorization session tokens live ten minutes (the consent round trip). */
export const AUTHORIZATION_SESSION_TTL_SECONDS = 600;

/**
 * How long after its expiry a session token still ends its request at the client (RFC 6749
 * §4.1.2.1 `access_denied`): a consent page left open past the ten minutes sends the person back
 * to the application with an answer instead of leaving it waiting. Nothing else accepts it then.
 */
export const AUTHORIZATION_SESSION_RETURN_SECONDS = 3600;

/**
 * The authorization session token: a self-contained JWE (purpose "authorization
 * session") created by `/oauth2/authorize` when consent is needed and validated by the
 * consent API. Each carries a random `jti` (a UUID): the key of its one answer, kept server
 * side so a session is answered once; a token without one (issued before) is refused.
 */
@Injectable()
export class AuthorizationSessionTokens {
  private readonly codec: JweCodec;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    clock: Clock,
    private readonly random: Random,
  ) {
    this.codec = new JweCodec(config.third_party_oauth2.jwe_keys, 'authorization session', clock);
  }

  issue(session: NewAuthorizationSession): Promise<string> {
    return this.codec.seal(
      {
        jti: this.random.uuid(),
        sub: session.principal,
        agent_id: session.agentId,
        original_url: session.originalUrl,
        cimd: session.cimd ?? undefined,
      },
      AUTHORIZATION_SESSION_TTL_SECONDS,
    );
  }

  /**
   * The session, or undefined when the token is invalid, tampered with, expired (more than
   * `lapsedForSeconds` ago) or has no `jti`.
   */
  async verify(token: string, lapsedForSeconds = 0): Promise<AuthorizationSession | undefined> {
    const payload = await this.codec.open(token, lapsedForSeconds);
    if (payload === undefined) return undefined;
    const { jti, exp, sub, agent_id: agentId, original_url: originalUrl, cimd } = payload;
    if (typeof sub !== 'string' || typeof agentId !== 'string' || typeof originalUrl !== 'string') return undefined;
    // A token without a jti cannot be answered once: refused as expired (it was issued under ten minutes before).
    if (typeof jti !== 'string' || !isCanonicalUuid(jti) || typeof exp !== 'number') return undefined;
    return {
      id: jti,
      expiresAt: new Date(exp * 1000),
      principal: sub,
      agentId,
      originalUrl,
      cimd: (cimd as CimdSnapshot | undefined) ?? null,
    };
  }
}
