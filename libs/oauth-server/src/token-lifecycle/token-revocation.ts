import { createHash } from 'node:crypto';
import { Clock, isCanonicalUuid } from '@broker/domain';
import { accessTokenRevoked, EventLedger, refreshTokenEvent } from '@broker/events';
import { RefreshTokenRepository, TokenStateRepository } from '@broker/persistence';
import { BrokerMetrics, currentTraceId, type RevokedTokenType } from '@broker/telemetry';
import { Injectable } from '@nestjs/common';
import { accessTokenClient, issuedToClient } from './issued-to-client';
import { LifecycleClients, type Revoker } from './lifecycle-clients';
import { LocalTokenVerifier } from './local-token-verifier';
import { looksLikeJwt, readTokenRequestForm } from './token-form-rules';

/**
 * `POST /oauth2/revoke` (RFC 7009). The client authenticates as at the token endpoint
 * (`LifecycleClients.revoker`); then the token is looked for as an access token of ours
 * (a JWT we signed, unexpired) when it has a JWT's form, else as a refresh token (by its
 * SHA-256); `token_type_hint` is not needed for that and is ignored. Only a token issued
 * to the requesting client is revoked (`issuedToClient`: an agent's own client id never
 * revokes a metadata-document client's token); an unknown, malformed, expired or foreign
 * token changes nothing and is answered the same 200 (RFC 7009 §2.2), so the answer never
 * tells whether a token exists.
 *
 * - A refresh token ends its whole family (`RefreshTokenRepository.revokeFamily`): every
 *   token of the family, and every access token issued with it (their `sid`), is inactive
 *   from then on; event `refresh_token.revoked`.
 * - An access token's `jti` is stored until its `exp` (`revoked_access_tokens`); event
 *   `access_token.revoked`. Its refresh token family stays (RFC 7009 §2.1 leaves it to the
 *   server): the client revokes the refresh token to end the whole session.
 */
@Injectable()
export class TokenRevocation {
  constructor(
    private readonly clients: LifecycleClients,
    private readonly verifier: LocalTokenVerifier,
    private readonly state: TokenStateRepository,
    private readonly refreshTokens: RefreshTokenRepository,
    private readonly events: EventLedger,
    private readonly clock: Clock,
    private readonly metrics: BrokerMetrics,
  ) {}

  async revoke(
    contentType: string | undefined,
    body: Buffer | undefined,
    authorization: string | undefined,
  ): Promise<void> {
    const request = readTokenRequestForm(contentType, body);
    const revoker = await this.clients.revoker(authorization, request.form);
    const token = request.token();
    // The form of the token decides where to look; a wrong or unknown hint changes nothing (RFC 7009 §2.1).
    this.metrics.tokenRevocation(
      looksLikeJwt(token) ? await this.revokeAccess(token, revoker) : await this.revokeRefresh(token, revoker),
    );
  }

  private async revokeAccess(token: string, revoker: Revoker): Promise<RevokedTokenType> {
    const claims = await this.verifier.verify(token);
    if (
      claims === undefined ||
      typeof claims.jti !== 'string' ||
      !isCanonicalUuid(claims.jti) ||
      typeof claims.exp !== 'number'
    )
      return 'none';
    const client = await accessTokenClient(claims, this.state);
    if (client === undefined || !issuedToClient(client, revoker)) return 'none';
    const { agentId } = client;
    const principal = typeof claims.sub === 'string' && claims.sub !== agentId ? claims.sub : null;
    const traceId = currentTraceId();
    await this.state.revokeAccessToken(claims.jti, new Date(claims.exp * 1000), (manager) =>
      this.events.record(accessTokenRevoked(agentId, principal, claims.jti as string, traceId), manager),
    );
    return 'access_token';
  }

  private async revokeRefresh(token: string, revoker: Revoker): Promise<RevokedTokenType> {
    const found = await this.state.refreshToken(createHash('sha256').update(token).digest());
    if (found === undefined || !issuedToClient(found, revoker)) return 'none';
    const revoked = await this.refreshTokens.revokeFamily(found.familyId, this.clock.now());
    this.state.familyRevoked(found.familyId);
    if (revoked) {
      this.events.enqueue(refreshTokenEvent('refresh_token.revoked', found, 'success'));
    }
    return 'refresh_token';
  }
}
