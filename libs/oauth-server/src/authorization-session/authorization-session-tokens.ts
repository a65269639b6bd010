import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
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

/** What an authorization session token carries (SPEC.md "Tokens and claims"). */
export interface AuthorizationSession {
  readonly agentId: string;
  readonly principal: string;
  /** The original `/oauth2/authorize` URL, with state, redirect_uri, PKCE and client_id. */
  readonly originalUrl: string;
  readonly cimd: CimdSnapshot | null;
}

/** Authorization session tokens live ten minutes (the consent round trip). */
export const AUTHORIZATION_SESSION_TTL_SECONDS = 600;

/**
 * The authorization session token: a self-contained JWE (purpose "authorization
 * session") created by `/oauth2/authorize` when consent is needed and validated by the
 * consent API. No server-side lookup.
 */
@Injectable()
export class AuthorizationSessionTokens {
  private readonly codec: JweCodec;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig, clock: Clock) {
    this.codec = new JweCodec(config.third_party_oauth2.jwe_keys, 'authorization session', clock);
  }

  issue(session: AuthorizationSession): Promise<string> {
    return this.codec.seal({ sub: session.principal, agent_id: session.agentId, original_url: session.originalUrl, cimd: session.cimd ?? undefined }, AUTHORIZATION_SESSION_TTL_SECONDS);
  }

  /** The session, or undefined when the token is invalid, tampered with or expired. */
  async verify(token: string): Promise<AuthorizationSession | undefined> {
    const payload = await this.codec.open(token);
    if (payload === undefined) return undefined;
    const { sub, agent_id: agentId, original_url: originalUrl, cimd } = payload;
    if (typeof sub !== 'string' || typeof agentId !== 'string' || typeof originalUrl !== 'string') return undefined;
    return { principal: sub, agentId, originalUrl, cimd: (cimd as CimdSnapshot | undefined) ?? null };
  }
}
