import { Clock, RetentionJob } from '@broker/domain';
import { Injectable, Logger } from '@nestjs/common';
import { DpopProofReplayRepository } from './replay-records.repository';

/**
 * A DPoP proof's replay record is needed only until the proof could no longer be accepted (its
 * `iat` plus `local.dpop.proof_max_age`, the record's `expires_at`); expired records are deleted
 * every minute, in batches, as every `RetentionJob` purges, by the end-user server
 * (docs/oauth2.md "DPoP"). The claims themselves never purge (docs/decisions/0029-dpop.md).
 */
const EVERY_MS = 60_000;

@Injectable()
export class DpopProofReplayRetention extends RetentionJob {
  constructor(replays: DpopProofReplayRepository, clock: Clock) {
    super(
      {
        retentionMs: 0,
        purgeBatch: (cutoff, batch) => replays.purgeExpired(cutoff, batch),
        what: 'expired DPoP proof records',
        topic: 'DPoP proof retention',
        everyMs: EVERY_MS,
      },
      clock,
      DpopProofReplayRetention.name,
      new Logger(DpopProofReplayRetention.name),
    );
  }
}
