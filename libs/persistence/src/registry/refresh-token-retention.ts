import { Clock, RetentionJob } from '@broker/domain';
import { Injectable, Logger } from '@nestjs/common';
import { RefreshTokenRepository } from './refresh-token.repository';

/**
 * Every refresh adds a row (the successor; the rotated token stays for reuse detection), so
 * a family's rows are deleted once the family's absolute expiry has passed (plus a minute for
 * clocks that differ): as every `RetentionJob` does, hourly, in batches, run by the end-user
 * server (docs/oauth2.md "Token lifecycle").
 */
const AFTER_FAMILY_EXPIRY_MS = 60_000;

@Injectable()
export class RefreshTokenRetention extends RetentionJob {
  constructor(tokens: RefreshTokenRepository, clock: Clock) {
    super(
      {
        retentionMs: AFTER_FAMILY_EXPIRY_MS,
        purgeBatch: (cutoff, batch) => tokens.purgeEnded(cutoff, batch),
        what: 'ended refresh token families',
        topic: 'refresh token retention',
      },
      clock,
      RefreshTokenRetention.name,
      new Logger(RefreshTokenRetention.name),
    );
  }
}
