import { SERVER_KIND, type ServerKind } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { RetentionJob } from '../retention-job';
import { RefreshTokenRepository } from './refresh-token.repository';

/**
 * Every refresh adds a row (the successor; the rotated token stays for reuse detection), so
 * a family's rows are deleted once the family's absolute expiry has passed (plus a minute for
 * clocks that differ): as every `RetentionJob` does, hourly, in batches, only in the end-user
 * server's instance (README "Token lifecycle").
 */
const AFTER_FAMILY_EXPIRY_MS = 60_000;

@Injectable()
export class RefreshTokenRetention extends RetentionJob {
  constructor(@Inject(SERVER_KIND) server: ServerKind, tokens: RefreshTokenRepository, clock: Clock) {
    super(
      {
        retentionMs: AFTER_FAMILY_EXPIRY_MS,
        runs: server === 'enduser',
        purgeBatch: (cutoff, batch) => tokens.purgeEnded(cutoff, batch),
        what: 'ended refresh token families',
        topic: 'refresh token retention',
      },
      clock,
      RefreshTokenRetention.name,
    );
  }
}
