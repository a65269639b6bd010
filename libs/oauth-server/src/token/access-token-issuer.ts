import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, OAuthError, Random } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { SignJWT } from 'jose';
import { SigningKeyService } from '../signing-keys/signing-key.service';

/** A token response body (RFC 6749 §5.1); no `data` envelope. */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: string;
  readonly expires_in?: number;
  readonly scope?: string;
  readonly issued_token_type?: string;
  readonly refresh_token?: string;
  readonly [extra: string]: unknown;
}

/** Who and what a locally issued access token is for. */
export interface AccessTokenSubject {
  /** The principal, or the agent id for client_credentials. */
  readonly sub: string;
  readonly agentId: string;
  readonly scopes: readonly string[];
}

/**
 * Signs the broker's own access tokens (JWT, RFC 9068 shape) with the current signing key,
 * imported once and cached by `SigningKeyService`: `iss`, `sub`, `agent_id`, `client_id`,
 * `scope`, `iat`, `exp` (`local.token_ttl`), `jti`. No `aud`: it comes only from the
 * configured claims expression (not yet supported in this version).
 */
@Injectable()
export class AccessTokenIssuer {
  readonly issuer: string;
  private readonly ttlSeconds: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly keys: SigningKeyService,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    this.issuer = config.oauth2_authorization_server.local.issuer_uri ?? config.server.enduser.public_url;
    this.ttlSeconds = Math.floor(config.oauth2_authorization_server.local.token_ttl / 1000);
  }

  async issue(subject: AccessTokenSubject): Promise<TokenResponse> {
    const key = await this.keys.currentKey();
    if (key === undefined) throw new OAuthError('server_error', 'no signing key is available');
    const now = Math.floor(this.clock.nowMs() / 1000);
    const scope = subject.scopes.join(' ');
    const claims: Record<string, unknown> = { agent_id: subject.agentId, client_id: subject.agentId };
    if (scope) claims.scope = scope;
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      .setSubject(subject.sub)
      .setIssuedAt(now)
      .setExpirationTime(now + this.ttlSeconds)
      .setJti(this.random.uuid())
      .sign(key.privateKey);
    return scope ? { access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds, scope } : { access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds };
  }
}
