import { Clock, RetentionJob } from '@broker/domain';
import { Injectable, Logger } from '@nestjs/common';
import { TokenStateRepository } from './token-state.repository';

/**
 * A revoked access token's row is needed only until the token expires (it fails
 * verification after that anyway); kept one more minute for clocks that differ, then
 * deleted as every `RetentionJob` does: hourly, in batches, run by the end-user server
 * (docs/oauth2.md "Token lifecycle").
 */
const AFTER_EXPIRY_MS = 60_000;

@Injectable()
export class RevokedAccessTokenRetention extends RetentionJob {
  constructor(tokens: TokenStateRepository, clock: Clock) {
    super(
      {
        retentionMs: AFTER_EXPIRY_MS,
        purgeBatch: (cutoff, batch) => tokens.purgeExpired(cutoff, batch),
        what: 'expired access token revocations',
        topic: 'token revocation retention',
      },
      clock,
      RevokedAccessTokenRetention.name,
      new Logger(RevokedAccessTokenRetention.name),
    );
  }
}
